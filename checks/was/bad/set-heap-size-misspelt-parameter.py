# negates: was/wsadmin/set-heap-size.py
# checker: jython-fake
# rejects: setJVMProperties has no parameter -initialHeapsize
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: -initialHeapsize (lower-case s) is not a parameter of setJVMProperties.
AdminTask.setJVMProperties("[-nodeName node01 -serverName server1 -initialHeapsize 2048 -maximumHeapSize 2048]")
AdminConfig.save()
