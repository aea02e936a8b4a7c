# negates: was/wsadmin/add-signer-to-plugin-keystore.py
# checker: jython-fake
# rejects: the key database is never propagated to webserver1
# test: checks/was/test_wsadmin_scripts.py::test_plugin_keystore_check_names_what_keeps_the_signer_from_the_plug_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig, AdminTask and AdminControl are given by wsadmin.
# Negative case for was/wsadmin/add-signer-to-plugin-keystore.py (outcome): signer and password saved in the cell,
# never propagated, so the IHS host keeps the key database without the signer (and with the old password).
SCOPE = "(cell):cell01:(node):node01:(server):webserver1"
AdminTask.addSignerCertificate(["-keyStoreName", "CMSKeyStore", "-keyStoreScope", SCOPE, "-certificateAlias", "was-ca",
                                "-certificateFilePath", "/tmp/wsfake/ca.pem", "-base64Encoded", "true"])
AdminTask.changeKeyStorePassword(["-keyStoreName", "CMSKeyStore", "-scopeName", SCOPE, "-keyStorePassword", "WebAS",
                                  "-newKeyStorePassword", "n3w-kdb-secret",
                                  "-newKeyStorePasswordVerify", "n3w-kdb-secret"])
AdminConfig.save()
