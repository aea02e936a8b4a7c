# negates: was/wsadmin/set-datasource-tls.py
# checker: jython-fake
# rejects: sslConnection takes true or false, not 'yes'
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig is given by wsadmin.
# Negative case: sslConnection given as "yes"; the driver reads a Boolean property, and "yes" is not true.
ds = AdminConfig.getid("/DataSource:TradeDataSource/")
props = AdminConfig.showAttribute(ds, "propertySet")
AdminConfig.create("J2EEResourceProperty", props, [["name", "sslConnection"], ["type", "java.lang.Boolean"],
                                                   ["value", "yes"]])
AdminConfig.save()
