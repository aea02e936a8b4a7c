# Prints the largest AES key (in bits) the Java runtime that runs this script allows; unlimited prints 2147483647.
# Run it in WebSphere's own JVM: run-in-websphere-java.sh print-max-aes-key-length.py
from javax.crypto import Cipher

bits = Cipher.getMaxAllowedKeyLength("AES")
if bits >= 256:
    print("unlimited JCE policy: AES keys up to %d bits" % bits)
else:
    print("LIMITED JCE policy: AES keys up to %d bits; install the unlimited policy files" % bits)
