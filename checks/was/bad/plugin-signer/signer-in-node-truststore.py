# negates: was/wsadmin/add-signer-to-plugin-keystore.py
# checker: jython-fake
# rejects: the signer was-ca is not added to CMSKeyStore
# test: checks/was/test_wsadmin_scripts.py::test_plugin_keystore_check_names_what_keeps_the_signer_from_the_plug_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig, AdminTask and AdminControl are given by wsadmin.
# Negative case for was/wsadmin/add-signer-to-plugin-keystore.py (outcome): every call is valid, but the signer goes
# to the node's trust store, not to the web server's CMSKeyStore; propagateKeyring copies a key database without it.
SCOPE = "(cell):cell01:(node):node01"
AdminTask.addSignerCertificate(["-keyStoreName", "NodeDefaultTrustStore", "-keyStoreScope", SCOPE,
                                "-certificateAlias", "was-ca", "-certificateFilePath", "/tmp/wsfake/ca.pem",
                                "-base64Encoded", "true"])
AdminTask.changeKeyStorePassword(["-keyStoreName", "CMSKeyStore",
                                  "-scopeName", "(cell):cell01:(node):node01:(server):webserver1",
                                  "-keyStorePassword", "WebAS",
                                  "-newKeyStorePassword", "n3w-kdb-secret",
                                  "-newKeyStorePasswordVerify", "n3w-kdb-secret"])
AdminConfig.save()
generator = AdminControl.completeObjectName("type=PluginCfgGenerator,*")
AdminControl.invoke(generator, "propagateKeyring", "/tmp/wsfake/profile/config cell01 node01 webserver1")
