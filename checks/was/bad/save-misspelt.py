# negates: was/wsadmin/*.py
# checker: jython-fake
# rejects: AdminConfig has no method saveConfig
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: AdminConfig has save(), not saveConfig().
AdminTask.setJVMProperties("[-nodeName node01 -serverName server1 -initialHeapSize 2048 -maximumHeapSize 2048]")
AdminConfig.saveConfig()
