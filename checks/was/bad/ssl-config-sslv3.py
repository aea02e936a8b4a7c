# ruff: noqa: F821 - a wsadmin script: AdminConfig and AdminTask are given by wsadmin.
# Negative case: SSLv3 is not a protocol value WebSphere 9 offers for an SSL configuration.
AdminTask.modifySSLConfig('[-alias NodeDefaultSSLSettings -sslProtocol SSLv3 -securityLevel HIGH]')
AdminConfig.save()
