# negates: was/wsadmin/add-signer-to-plugin-keystore.py
# checker: jython-fake
# rejects: the key database keeps IBM's default password
# test: checks/was/test_wsadmin_scripts.py::test_plugin_keystore_check_names_what_keeps_the_signer_from_the_plug_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig, AdminTask and AdminControl are given by wsadmin.
# Negative case for was/wsadmin/add-signer-to-plugin-keystore.py (outcome): the signer reaches the web server, but
# the key database keeps IBM's default password, with which anyone can add a signer the plug-in would trust.
SCOPE = "(cell):cell01:(node):node01:(server):webserver1"
AdminTask.addSignerCertificate(["-keyStoreName", "CMSKeyStore", "-keyStoreScope", SCOPE, "-certificateAlias", "was-ca",
                                "-certificateFilePath", "/tmp/wsfake/ca.pem", "-base64Encoded", "true"])
AdminConfig.save()
generator = AdminControl.completeObjectName("type=PluginCfgGenerator,*")
AdminControl.invoke(generator, "propagateKeyring", "/tmp/wsfake/profile/config cell01 node01 webserver1")
