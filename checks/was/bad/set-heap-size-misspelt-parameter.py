# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: -initialHeapsize (lower-case s) is not a parameter of setJVMProperties.
AdminTask.setJVMProperties("[-nodeName node01 -serverName server1 -initialHeapsize 2048 -maximumHeapSize 2048]")
AdminConfig.save()
