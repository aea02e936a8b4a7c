# ruff: noqa: F821 - a wsadmin script: AdminConfig is given by wsadmin.
# Negative case: a misspelt driver property. WebSphere stores it without complaint and the driver ignores it:
# the connection stays unencrypted.
ds = AdminConfig.getid("/DataSource:TradeDataSource/")
props = AdminConfig.showAttribute(ds, "propertySet")
AdminConfig.create("J2EEResourceProperty", props, [["name", "sslConection"], ["type", "java.lang.Boolean"],
                                                   ["value", "true"]])
AdminConfig.save()
