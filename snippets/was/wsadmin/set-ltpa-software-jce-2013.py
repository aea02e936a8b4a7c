# The 2013 study's JVM custom property com.ibm.ws.security.ltpa.forceSoftwareJCEProviderForLTPA=true (WAS 8).
# Run: wsadmin.sh -lang jython -f set-ltpa-software-jce-2013.py NODE SERVER; adds it once, then saves.
# Console path: Application servers > SERVER > Process definition > Java Virtual Machine > Custom properties.
import sys

NAME = "com.ibm.ws.security.ltpa.forceSoftwareJCEProviderForLTPA"
if len(sys.argv) < 2:
    print("usage: set-ltpa-software-jce-2013.py NODE SERVER")
    sys.exit(2)
node, server = sys.argv[0], sys.argv[1]

server_id = AdminConfig.getid("/Node:%s/Server:%s/" % (node, server))
if not server_id:
    print("No server %s on node %s: check the names in the console (Servers > Server Types)." % (server, node))
    sys.exit(1)
jvm = AdminConfig.list("JavaVirtualMachine", server_id).splitlines()[0]

for prop in AdminConfig.list("Property", jvm).splitlines():
    if AdminConfig.showAttribute(prop, "name") == NAME:
        print("%s is already set on %s; nothing changed." % (NAME, server))
        sys.exit(0)
AdminConfig.create("Property", jvm, [["name", NAME], ["value", "true"], ["description", "added for CEX support"]],
                   "systemProperties")
AdminConfig.save()
print("%s=true added to %s; restart the server." % (NAME, server))
