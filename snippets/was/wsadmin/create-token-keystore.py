# WebSphere traditional: a keystore that is the openCryptoki token (type PKCS11), not a file, for the SSL
# configuration of the next page to select. NOT RUN ON A CELL: checked only against a recording stand-in of
# wsadmin with the parameters IBM documents for createKeyStore. The token's user PIN comes from TOKEN_USER_PIN.
# Run: TOKEN_USER_PIN=... wsadmin.sh -lang jython -f create-token-keystore.py NODE [CONFIG_FILE] [NAME]
import os
import sys

if len(sys.argv) < 1:
    print("usage: create-token-keystore.py NODE [CONFIG_FILE] [NAME]")
    sys.exit(2)
node = sys.argv[0]
config = (sys.argv[1:2] or ["/etc/websphere/pkcs11-ica-token.cfg"])[0]
name = (sys.argv[2:3] or ["IBMICATOKKeyStore"])[0]
pin = os.environ.get("TOKEN_USER_PIN", "")
if not pin:
    print("Set TOKEN_USER_PIN to the token's user PIN (read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN).")
    sys.exit(1)

cell = AdminControl.getCell()
if not AdminConfig.getid("/Node:%s/" % node):
    print("No node %s in cell %s: check the name in the console (System administration > Nodes)." % (node, cell))
    sys.exit(1)
scope = "(cell):%s:(node):%s" % (cell, node)
for keystore in AdminTask.listKeyStores(["-scopeName", scope]).splitlines():
    if keystore.startswith(name + "("):
        print("Keystore %s exists at %s already; nothing changed." % (name, scope))
        sys.exit(0)

# The location is the provider's configuration file (its name line names the provider, IBMPKCS11Impl-<name>): how
# WebSphere 9.0.5 reads the path of a PKCS11 keystore could not be confirmed, see the page.
AdminTask.createKeyStore(["-keyStoreName", name, "-scopeName", scope,
                          "-keyStoreDescription", "server key in the openCryptoki ICA token",
                          "-keyStoreLocation", config, "-keyStoreType", "PKCS11",
                          "-keyStorePassword", pin, "-keyStorePasswordVerify", pin,
                          "-keyStoreIsFileBased", "false", "-keyStoreReadOnly", "true",
                          "-keyStoreInitAtStartup", "true", "-keyStoreStashFile", "false",
                          "-keyStoreUsage", "SSLKeys"])
AdminConfig.save()
print("Keystore %s (PKCS11, %s) created at %s; select it and the token key's alias in the SSL configuration." % (
    name, config, scope))
