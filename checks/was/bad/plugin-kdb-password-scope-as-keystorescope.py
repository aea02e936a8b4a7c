# negates: was/wsadmin/add-signer-to-plugin-keystore.py
# checker: jython-fake
# rejects: changeKeyStorePassword has no parameter -keyStoreScope
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case for was/wsadmin/add-signer-to-plugin-keystore.py: the signer commands name the scope -keyStoreScope,
# but changeKeyStorePassword names it -scopeName; the fake must refuse the signer commands' name here.
AdminTask.changeKeyStorePassword(["-keyStoreName", "CMSKeyStore",
                                  "-keyStoreScope", "(cell):cell01:(node):node01:(server):webserver1",
                                  "-keyStorePassword", "old", "-newKeyStorePassword", "new",
                                  "-newKeyStorePasswordVerify", "new"])
AdminConfig.save()
