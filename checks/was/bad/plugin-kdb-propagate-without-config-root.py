# negates: was/wsadmin/add-signer-to-plugin-keystore.py
# checker: jython-fake
# rejects: PluginCfgGenerator.propagateKeyring takes 4 arguments
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminControl are given by wsadmin.
# Negative case for was/wsadmin/add-signer-to-plugin-keystore.py: propagateKeyring given the cell, node and web server
# only; IBM's example passes the profile's configuration root first, so the fake must refuse three arguments.
generator = AdminControl.completeObjectName("type=PluginCfgGenerator,*")
AdminControl.invoke(generator, "propagateKeyring", "cell01 node01 webserver1")
AdminConfig.save()
