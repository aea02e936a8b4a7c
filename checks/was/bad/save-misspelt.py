# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: AdminConfig has save(), not saveConfig().
AdminTask.setJVMProperties("[-nodeName node01 -serverName server1 -initialHeapSize 2048 -maximumHeapSize 2048]")
AdminConfig.saveConfig()
