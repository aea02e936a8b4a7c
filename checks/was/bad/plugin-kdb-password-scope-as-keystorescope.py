# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case for was/wsadmin/add-signer-to-plugin-keystore.py: the signer commands name the scope -keyStoreScope,
# but changeKeyStorePassword names it -scopeName; the fake must refuse the signer commands' name here.
AdminTask.changeKeyStorePassword(["-keyStoreName", "CMSKeyStore",
                                  "-keyStoreScope", "(cell):cell01:(node):node01:(server):webserver1",
                                  "-keyStorePassword", "old", "-newKeyStorePassword", "new",
                                  "-newKeyStorePasswordVerify", "new"])
AdminConfig.save()
