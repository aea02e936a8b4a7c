# Limits an SSL configuration to TLS 1.2 and 1.3 with AES-GCM suites (ECDHE-RSA for TLS 1.2), then saves.
# Run: wsadmin.sh -lang jython -f set-ssl-config-current.py NODE [ALIAS]   (default NodeDefaultSSLSettings)
# Console path: Security > SSL certificate and key management > SSL configurations > ALIAS
# > Quality of protection (QoP) settings. Restart the servers that use the configuration.
import sys

SUITES = ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]
if len(sys.argv) < 1:
    print("usage: set-ssl-config-current.py NODE [ALIAS]")
    sys.exit(2)
node = sys.argv[0]
alias = "NodeDefaultSSLSettings"
if len(sys.argv) > 1:
    alias = sys.argv[1]

cell = AdminConfig.showAttribute(AdminConfig.list("Cell").splitlines()[0], "name")
if not AdminConfig.getid("/Node:%s/" % node):
    print("No node %s in cell %s: check the name in the console (System administration > Nodes)." % (node, cell))
    sys.exit(1)

AdminTask.modifySSLConfig('[-alias %s -scopeName (cell):%s:(node):%s -sslProtocol TLSv1.2,TLSv1.3'
                          ' -securityLevel CUSTOM -enabledCiphers "%s"]' % (alias, cell, node, " ".join(SUITES)))
AdminConfig.save()
print("%s at node %s: TLSv1.2,TLSv1.3 with %s" % (alias, node, " ".join(SUITES)))
