# negates: was/wsadmin/set-ssl-config-current.py
# checker: tls-as-written
# rejects: AdminTask.modifySSLConfig: 'HIGH' is not a cipher suite but a keyword
# test: checks/static/test_tls_as_written.py::test_a_negative_case_is_rejected
# ruff: noqa: F821, UP031 - a wsadmin script (Jython 2.7): AdminConfig and AdminTask are given by wsadmin.
# Negative case of tls-as-written: SSL_TLSv2 (TLS 1.0 to 1.2 with IBMJSSE2) and a security level instead of a
# list of suites, as many older WebSphere guides set it.
# Run: wsadmin.sh -lang jython -f wsadmin-ssl-tlsv2-high.py NODE
import sys

node = sys.argv[0]
cell = AdminConfig.showAttribute(AdminConfig.list("Cell").splitlines()[0], "name")
AdminTask.modifySSLConfig('[-alias NodeDefaultSSLSettings -scopeName (cell):%s:(node):%s -sslProtocol SSL_TLSv2'
                          ' -securityLevel HIGH]' % (cell, node))
AdminConfig.save()
