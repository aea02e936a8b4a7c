# Prints the largest AES key (in bits) the Java runtime that runs this script allows; unlimited prints 2147483647.
# Run it in WebSphere's own JVM: run-jce-check.sh (wsadmin.sh -lang jython -conntype NONE -f this file).
from javax.crypto import Cipher

bits = Cipher.getMaxAllowedKeyLength("AES")
if bits >= 256:
    print("unlimited JCE policy: AES keys up to %d bits" % bits)
else:
    print("LIMITED JCE policy: AES keys up to %d bits; install the unlimited policy files" % bits)
