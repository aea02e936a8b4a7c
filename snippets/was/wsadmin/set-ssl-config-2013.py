# The 2013 study's SSL setting: one cipher suite, SSL_RSA_WITH_AES_256_CBC_SHA, in the node's SSL configuration.
# Run: wsadmin.sh -lang jython -f set-ssl-config-2013.py NODE [ALIAS]   (default NodeDefaultSSLSettings)
# Console path: Security > SSL certificate and key management > SSL configurations > ALIAS > QoP settings.
import sys

if len(sys.argv) < 1:
    print("usage: set-ssl-config-2013.py NODE [ALIAS]")
    sys.exit(2)
node = sys.argv[0]
alias = "NodeDefaultSSLSettings"
if len(sys.argv) > 1:
    alias = sys.argv[1]

cell = AdminConfig.showAttribute(AdminConfig.list("Cell").splitlines()[0], "name")
if not AdminConfig.getid("/Node:%s/" % node):
    print("No node %s in cell %s: check the name in the console (System administration > Nodes)." % (node, cell))
    sys.exit(1)

AdminTask.modifySSLConfig('[-alias %s -scopeName (cell):%s:(node):%s -securityLevel CUSTOM'
                          ' -enabledCiphers "SSL_RSA_WITH_AES_256_CBC_SHA"]' % (alias, cell, node))
AdminConfig.save()
print("%s at node %s: SSL_RSA_WITH_AES_256_CBC_SHA only" % (alias, node))
