# ruff: noqa: F821 - a wsadmin script: AdminConfig is given by wsadmin.
# Negative case: sslConnection given as "yes"; the driver reads a Boolean property, and "yes" is not true.
ds = AdminConfig.getid("/DataSource:TradeDataSource/")
props = AdminConfig.showAttribute(ds, "propertySet")
AdminConfig.create("J2EEResourceProperty", props, [["name", "sslConnection"], ["type", "java.lang.Boolean"],
                                                   ["value", "yes"]])
AdminConfig.save()
