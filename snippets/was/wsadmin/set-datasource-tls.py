# Turns on TLS for a WebSphere data source of IBM's JDBC driver (type 4, Db2): the driver's TLS settings become
# custom properties of the data source, with the values the Db2 chapter proves with the real driver, and the port
# becomes Db2's TLS port. Then saves; restart the servers that use the data source.
# Run: wsadmin.sh -lang jython -f set-datasource-tls.py DATASOURCE TLS_PORT CA_PEM
# CA_PEM is the Db2 server's certificate (or its CA) as a PEM file, at that path on every node: the driver reads
# it itself (sslCertLocation), so no truststore password has to be kept in WebSphere's configuration.
import sys

if len(sys.argv) != 3:
    print("usage: set-datasource-tls.py DATASOURCE TLS_PORT CA_PEM")
    sys.exit(2)
name, port, ca_pem = sys.argv[0], sys.argv[1], sys.argv[2]
if not port.isdigit() or not 0 < int(port) < 65536:
    print("TLS_PORT must be the TCP port of Db2's SSL_SVCENAME, not %s" % port)
    sys.exit(2)
if not ca_pem.startswith("/"):
    print("CA_PEM must be an absolute path (the driver opens it on each node): %s" % ca_pem)
    sys.exit(2)

PROPERTIES = [
    ("sslConnection", "java.lang.Boolean", "true"),
    ("sslVersion", "java.lang.String", "TLSv1.3"),
    ("sslCipherSuites", "java.lang.String",
     "TLS_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,"
     "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    ("sslCertLocation", "java.lang.String", ca_pem),
    ("portNumber", "java.lang.Integer", port),
]

found = [d for d in AdminConfig.getid("/DataSource:%s/" % name).splitlines() if d]
if len(found) != 1:
    print("%d data sources are named %s: name one that exists once (Resources > JDBC > Data sources)."
          % (len(found), name))
    sys.exit(1)
property_set = AdminConfig.showAttribute(found[0], "propertySet")
existing = {}
for prop in AdminConfig.list("J2EEResourceProperty", property_set).splitlines():
    if prop:
        existing[AdminConfig.showAttribute(prop, "name")] = prop

for prop_name, prop_type, value in PROPERTIES:
    if prop_name in existing:
        AdminConfig.modify(existing[prop_name], [["value", value]])
    else:
        AdminConfig.create("J2EEResourceProperty", property_set,
                           [["name", prop_name], ["type", prop_type], ["value", value]])
AdminConfig.save()
print("Data source %s: TLS on port %s, server certificate from %s; restart the servers that use it."
      % (name, port, ca_pem))
