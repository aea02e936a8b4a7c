# negates: was/wsadmin/create-token-keystore.py
# checker: jython-fake
# rejects: -keyStoreType 'PKCS11IMPLKS' is not one of
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: IBMPKCS11Impl's own keystore type (PKCS11IMPLKS, from IBM Java's pages) given to WebSphere,
# whose keystore type for a hardware token is PKCS11.
AdminTask.createKeyStore(["-keyStoreName", "IBMICATOKKeyStore", "-keyStoreType", "PKCS11IMPLKS",
                          "-keyStoreLocation", "/etc/websphere/pkcs11-ica-token.cfg",
                          "-keyStorePassword", "x", "-keyStorePasswordVerify", "x"])
AdminConfig.save()
