# WebSphere traditional: add the CA that signed the application server's certificate to the web server definition's
# plug-in keystore (CMSKeyStore, plugin-key.kdb) in the cell, give that key database a password of your own instead
# of IBM's default, save, and copy (propagate) the key database to the web server. NOT RUN ON A CELL: checked only
# against a recording stand-in of wsadmin with the parameters IBM documents for each command.
# Run where wsadmin reaches the deployment manager (or the standalone server that owns the web server definition):
#   PLUGIN_KDB_PASSWORD=... PLUGIN_KDB_NEW_PASSWORD=... \
#   wsadmin.sh -lang jython -f add-signer-to-plugin-keystore.py NODE WEBSERVER CA_FILE PROFILE_ROOT [ALIAS]
# PLUGIN_KDB_PASSWORD is the key database's password now, PLUGIN_KDB_NEW_PASSWORD the one it gets.
import os
import sys

DEFAULT_PASSWORD = "WebAS"  # IBM's documented default for plugin-key.kdb: refused as a new password, never used

if len(sys.argv) < 4:
    print("usage: add-signer-to-plugin-keystore.py NODE WEBSERVER CA_FILE PROFILE_ROOT [ALIAS]")
    sys.exit(2)
node, webserver, ca_file, profile_root = sys.argv[0], sys.argv[1], sys.argv[2], sys.argv[3]
alias = (sys.argv[4:5] or ["was-ca"])[0]
keystore = os.environ.get("PLUGIN_KDB_KEYSTORE", "CMSKeyStore")
password = os.environ.get("PLUGIN_KDB_PASSWORD", "")
new_password = os.environ.get("PLUGIN_KDB_NEW_PASSWORD", "")

# Everything is checked before the first change, so that a refusal leaves the cell as it was.
if not password or not new_password:
    print("Set PLUGIN_KDB_PASSWORD to the key database's current password (IBM's default until it was changed) and "
          "PLUGIN_KDB_NEW_PASSWORD to the new one (read -rs NAME; export NAME). Nothing was changed.")
    sys.exit(1)
if new_password in (password, DEFAULT_PASSWORD):
    print("PLUGIN_KDB_NEW_PASSWORD is the current password or IBM's default, which anyone can look up: choose "
          "another one. Nothing was changed.")
    sys.exit(1)
try:
    head = open(ca_file, "rb").read(4096)
except IOError:
    print("Cannot read %s: copy the CA's certificate to this host first. Nothing was changed." % ca_file)
    sys.exit(1)
if "PRIVATE KEY" in head:
    print("%s holds a private key: give the CA's certificate only. Nothing was changed." % ca_file)
    sys.exit(1)
if "-----BEGIN CERTIFICATE-----" in head:
    base64 = "true"
elif head[:1] == "\x30":  # DER: an ASN.1 SEQUENCE
    base64 = "false"
else:
    print("%s is neither a PEM nor a DER certificate. Nothing was changed." % ca_file)
    sys.exit(1)

cell = AdminControl.getCell()
config_root = os.path.join(profile_root, "config")
if not os.path.isdir(os.path.join(config_root, "cells", cell)):
    print("%s has no configuration of cell %s: give the profile wsadmin is connected to (the deployment manager's "
          "in a cell). Nothing was changed." % (profile_root, cell))
    sys.exit(1)
if not AdminConfig.getid("/Node:%s/Server:%s/" % (node, webserver)):
    print("No server %s on node %s in cell %s: check the names under Servers > Server Types > Web servers. "
          "Nothing was changed." % (webserver, node, cell))
    sys.exit(1)
scope = "(cell):%s:(node):%s:(server):%s" % (cell, node, webserver)
if not [k for k in AdminTask.listKeyStores(["-scopeName", scope]).splitlines() if k.startswith(keystore + "(")]:
    print("No keystore %s at %s: is %s a web server definition? (Set PLUGIN_KDB_KEYSTORE if its plug-in keystore "
          "has another name.) Nothing was changed." % (keystore, scope, webserver))
    sys.exit(1)
generator = AdminControl.completeObjectName("type=PluginCfgGenerator,*")
if not generator:
    print("wsadmin reaches no PluginCfgGenerator MBean, so the key database could not be propagated: connect to the "
          "running deployment manager (not -conntype NONE). Nothing was changed.")
    sys.exit(1)

signers = AdminTask.listSignerCertificates(["-keyStoreName", keystore, "-keyStoreScope", scope])
if ("[alias %s]" % alias) in signers:
    print("%s at %s already holds a signer labelled %s: keeping it." % (keystore, scope, alias))
else:
    AdminTask.addSignerCertificate(["-keyStoreName", keystore, "-keyStoreScope", scope, "-certificateAlias", alias,
                                    "-certificateFilePath", ca_file, "-base64Encoded", base64])
# changeKeyStorePassword names the scope -scopeName, where the signer commands say -keyStoreScope.
AdminTask.changeKeyStorePassword(["-keyStoreName", keystore, "-scopeName", scope,
                                  "-keyStorePassword", password, "-newKeyStorePassword", new_password,
                                  "-newKeyStorePasswordVerify", new_password])
AdminConfig.save()

# A managed node gets the saved configuration through its node agent; an unmanaged web server node has none, and
# the IBM HTTP Server administration server receives the file instead.
sync = AdminControl.completeObjectName("type=NodeSync,process=nodeagent,node=%s,*" % node)
if sync:
    AdminControl.invoke(sync, "sync")
AdminControl.invoke(generator, "propagateKeyring", "%s %s %s %s" % (config_root, cell, node, webserver))
print("Signer %s and a new password are in %s at %s; the key database was propagated to %s. Restart IBM HTTP "
      "Server there." % (alias, keystore, scope, webserver))
