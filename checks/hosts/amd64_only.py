"""Reasons a host test leaves out the s390x host, for ``only_hosts("debian13-amd64", why=...)``.

amd64 runs every host test already (checks/hosts/plugin.py), so such a mark matters only for ``ZR_EVERY_HOST=1``:
it says what stops the test under qemu-user. The reasons several modules share are here; a module's own reason is
written at its mark.
"""

NO_SHA256 = "its clients offer the token key SHA-256 signature schemes, which qemu's ICA token cannot make"
NO_P256 = "the two-key site needs a P-256 key in the token, which the ICA token makes only with CPACF ECC"
SLOW_LOGIN = "under qemu-user a token login takes most of pkcs11-provider's one-second wait"
NO_SUBREAPER = "qemu-user does not make the emulated python a child subreaper, so no zombie is made there"
NO_SETUID = "qemu-user runs sudo without its setuid bit: sudo works for root only"
