# negates: was/wsadmin/set-ssl-config-current.py
# checker: tls-as-written
# rejects: AdminTask.modifySSLConfig: 'HIGH' is not a cipher suite but a keyword
# checker: jython-fake
# rejects: -sslProtocol 'SSLv3' is not one of
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: SSLv3 is not a protocol value WebSphere 9 offers for an SSL configuration.
AdminTask.modifySSLConfig('[-alias NodeDefaultSSLSettings -sslProtocol SSLv3 -securityLevel HIGH]')
AdminConfig.save()
