# Sets the global security custom property for the key size of certificates WebSphere creates, then saves.
# Run: wsadmin.sh -lang jython -f set-default-cert-key-size.py [BITS]   (default 2048; 3072 or 4096 also fine)
# Console path: Security > Global security > Custom properties > New.
import sys

bits = "2048"
if len(sys.argv) > 0:
    bits = sys.argv[0]
if bits not in ("2048", "3072", "4096"):
    print("BITS must be 2048, 3072 or 4096; smaller RSA keys are no longer safe: %s" % bits)
    sys.exit(2)

AdminTask.setAdminActiveSecuritySettings('[-customProperties ["com.ibm.ssl.defaultCertReqKeySize=%s"]]' % bits)
AdminConfig.save()
print("com.ibm.ssl.defaultCertReqKeySize=%s; certificates created from now on use %s-bit keys." % (bits, bits))
