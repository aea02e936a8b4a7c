# Sets the initial and the maximum Java heap of one application server to the same size, then saves.
# Run: wsadmin.sh -lang jython -f set-heap-size.py NODE SERVER [HEAP_MB]   (default 2048 MB, as in the study)
# Restart the server afterwards; the console path is Servers > Server Types > WebSphere application servers
# > SERVER > Java and Process Management > Process definition > Java Virtual Machine.
import sys

if len(sys.argv) < 2:
    print("usage: set-heap-size.py NODE SERVER [HEAP_MB]")
    sys.exit(2)
node, server = sys.argv[0], sys.argv[1]
heap = "2048"
if len(sys.argv) > 2:
    heap = sys.argv[2]
if not heap.isdigit() or int(heap) < 256:
    print("HEAP_MB must be a whole number of megabytes, at least 256: %s" % heap)
    sys.exit(2)

if not AdminConfig.getid("/Node:%s/Server:%s/" % (node, server)):
    print("No server %s on node %s: check the names in the console (Servers > Server Types)." % (server, node))
    sys.exit(1)

AdminTask.setJVMProperties("[-nodeName %s -serverName %s -initialHeapSize %s -maximumHeapSize %s]"
                           % (node, server, heap, heap))
AdminConfig.save()
print("Java heap of %s on %s set to %s MB (initial and maximum); restart the server." % (server, node, heap))
