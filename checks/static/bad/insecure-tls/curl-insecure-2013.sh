#!/usr/bin/env bash
# The 2013 study's sniff test of the WebSphere HTTPS port, as printed (less the root prompt).
set -euo pipefail
curl -k -v https://wasnode1.net:9443/daytrader
