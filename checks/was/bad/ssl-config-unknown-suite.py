# negates: was/wsadmin/set-ssl-config-current.py
# checker: jython-fake
# rejects: unknown cipher suites ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA256']
# test: checks/was/test_wsadmin_scripts.py::test_fake_rejects_the_mistake_in
# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: no cipher suite combines AES-256-GCM with SHA-256; a typo like this disables the endpoint.
AdminTask.modifySSLConfig('[-alias NodeDefaultSSLSettings -scopeName (cell):cell01:(node):node01'
                          ' -securityLevel CUSTOM -enabledCiphers "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA256"]')
AdminConfig.save()
