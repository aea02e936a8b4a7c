# negates: was/wsadmin/set-datasource-tls.py
# checker: jython-fake
# rejects: IBM's JDBC driver has no property 'sslConection'
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig is given by wsadmin.
# Negative case: a misspelt driver property. WebSphere stores it without complaint and the driver ignores it:
# the connection stays unencrypted.
ds = AdminConfig.getid("/DataSource:TradeDataSource/")
props = AdminConfig.showAttribute(ds, "propertySet")
AdminConfig.create("J2EEResourceProperty", props, [["name", "sslConection"], ["type", "java.lang.Boolean"],
                                                   ["value", "true"]])
AdminConfig.save()
