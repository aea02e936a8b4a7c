# Prints the security providers of the Java runtime that runs this script, in the order Java asks them.
# Run it in WebSphere's own JVM: run-in-websphere-java.sh print-providers.py
from java.security import Security

number = 0
for provider in Security.getProviders():
    number += 1
    print("%2d %s %s" % (number, provider.getName(), provider.getVersion()))
