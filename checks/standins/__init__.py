"""The checks' stand-ins: programs the checks run in place of a product they cannot run here, and the code that drives
them on a container host. They are test-only, so they live here and not in the library (zrunbook/), which readers
install as a wheel; checks/test_layout.py holds zrunbook/ to it.

* ihs/: IBM HTTP Server's TLS without IHS: ``gskserve`` (gskit_server/gskserve.c, a small TLS server on GSKit's SSL
  API) with gskit_server.py mapping the mod_ibm_ssl directives to GSKit attributes, and gskit_verdicts.py running it
  over the facts tables' names; ``gskconnect`` (gskit_client/gskconnect.c, the web server plug-in's TLS client) with
  plugin_transport.py mapping plugin-cfg.xml's ``<Transport>``; the ``httpd -t`` lint module (mod_ibm_ssl/mod_ibm_ssl.c,
  Apache httpd registering the mod_ibm_ssl directives) built and run by ihs_lint.py.
* was/: the recording fake of wsadmin (wsadmin_fake.py, run under Jython 2.7), OpenJDK's SunPKCS11 in place of
  IBMPKCS11Impl (Pkcs11Check.java) and an HTTPS server in place of WebSphere's (TokenHttpsServer.java).
* db2/: the recording TLS endpoint in place of a Db2 server (endpoint.py: ``openssl s_server -msg``).

Every chapter's checks may import it, as they import the harness (checks/hosts/); the library and the guide never do.
"""
