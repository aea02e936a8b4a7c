# ruff: noqa: UP004, UP031 - runs under Jython 2.7, written in its idiom.
"""A recording stand-in for wsadmin's AdminConfig, AdminTask and AdminControl objects (runs under Jython 2.7).

Each object accepts only the methods the real one has (facts/was/wsadmin-commands.csv, with sources); AdminTask
commands also have their parameters checked: unknown parameter, missing required one, value outside the
documented set. AdminControl.invoke on an MBean type the table names (PluginCfgGenerator, NodeSync) accepts only
that type's operations with their number of arguments. Every call is recorded as [object, method, arguments,
parsed parameters]. ``run_all`` executes a batch of scripts, each like ``wsadmin -lang jython -f script arg...``
(sys.argv holds only the arguments), and prints one JSON document with the calls, the exit status and the output
of each: one JVM for all scripts. AdminTask's arguments are parsed as wsadmin parses them by the library's
zrunbook/was/wsadmin_args.py, which the check copies beside this file.
"""

import csv
import json
import sys

try:
    from StringIO import StringIO  # Jython 2.7
except ImportError:  # CPython 3, for local experiments
    from io import StringIO


try:
    from wsadmin_args import WsadminError, parse_task_args  # copied beside this file (Jython 2.7, a container)
except ImportError:  # CPython 3 in a checkout, for local experiments
    from zrunbook.was.wsadmin_args import WsadminError, parse_task_args


class Facts(object):
    def __init__(self, commands_csv, ciphers, jdbc_properties=()):
        self.methods = {}
        self.params = {}
        # the custom properties IBM's JDBC driver knows (name -> Java type): AdminConfig.create and modify of a
        # J2EEResourceProperty are checked against them, as the driver would ignore a misspelt one
        self.jdbc = dict(jdbc_properties)
        for row in csv.DictReader(StringIO(commands_csv)):
            self.methods.setdefault(row["object"], set()).add(row["command"])
            if row["parameter"]:
                self.params.setdefault(row["command"], []).append(row)
        self.ciphers = set(ciphers)

    def check_resource_property(self, attributes):
        pairs = dict((a[0], a[1]) for a in attributes)
        unknown = sorted(set(pairs) - set(["name", "type", "value", "description", "required"]))
        if unknown:
            raise WsadminError("J2EEResourceProperty has no attribute %s" % unknown)
        name = pairs.get("name", "")
        if name not in self.jdbc:
            raise WsadminError("IBM's JDBC driver has no property %r" % name)
        if "type" in pairs and pairs["type"] != self.jdbc[name]:
            raise WsadminError("%s is of type %s, not %s" % (name, self.jdbc[name], pairs["type"]))
        if self.jdbc[name] == "java.lang.Boolean" and pairs.get("value") not in ("true", "false"):
            raise WsadminError("%s takes true or false, not %r" % (name, pairs.get("value")))
        if self.jdbc[name] == "java.lang.Integer" and not str(pairs.get("value", "")).isdigit():
            raise WsadminError("%s takes a number, not %r" % (name, pairs.get("value")))

    def check_task(self, command, pairs):
        rows = self.params.get(command, [])
        known = dict((r["parameter"], r) for r in rows)
        names = [n for n, _ in pairs]
        for name, value in pairs:
            if name not in known:
                raise WsadminError("%s has no parameter -%s (it has %s)" % (command, name, ", ".join(sorted(known))))
            allowed = known[name]["values"]
            if allowed == "int" and not value.isdigit():
                raise WsadminError("-%s takes a number of MB, not %r" % (name, value))
            if "|" in allowed and value not in allowed.split("|"):
                raise WsadminError("-%s %r is not one of %s" % (name, value, allowed))
            if name == "enabledCiphers":
                unknown = [c for c in value.split() if c not in self.ciphers]
                if unknown:
                    raise WsadminError("unknown cipher suites %s" % unknown)
            if name == "customProperties":
                for item in value.strip("[]").split():
                    if "=" not in item.strip('"'):
                        raise WsadminError("custom property %r is not name=value" % item)
        for r in rows:
            if r["required"] == "yes" and r["parameter"] not in names:
                raise WsadminError("%s needs -%s" % (command, r["parameter"]))

    def check_invoke(self, args):
        """AdminControl.invoke(name, operation[, 'arg arg ...']): the operation must be one the MBean's type has."""
        name, operation = args[0], args[1]
        mbean_type = dict(p.split("=", 1) for p in name.split(":", 1)[-1].split(",") if "=" in p).get("type", "")
        if mbean_type not in self.methods:
            return []
        if operation not in self.methods[mbean_type]:
            raise WsadminError("%s MBean has no operation %s (it has %s)" % (
                mbean_type, operation, ", ".join(sorted(self.methods[mbean_type]))))
        given = (len(args) > 2 and args[2] or "").strip("[]").split()
        wanted = [r["parameter"] for r in self.params.get(operation, [])]
        if len(given) != len(wanted):
            raise WsadminError("%s.%s takes %d arguments (%s), not %d" % (
                mbean_type, operation, len(wanted), " ".join(wanted), len(given)))
        return given


class Recorder(object):
    """One wsadmin scripting object; attribute access to an unknown method raises AttributeError."""

    def __init__(self, name, facts, calls, config):
        self._name, self._facts, self._calls, self._config = name, facts, calls, config

    def __getattr__(self, method):
        if method.startswith("_") or method not in self._facts.methods.get(self._name, ()):
            raise AttributeError("%s has no method %s" % (self._name, method))

        def call(*args):
            parsed = None
            if self._name == "AdminTask":
                parsed = parse_task_args(args[0] if args else "")
                self._facts.check_task(method, parsed)
            if (self._name, method) == ("AdminConfig", "create") and args and args[0] == "J2EEResourceProperty":
                self._facts.check_resource_property(args[2])
            if (self._name, method) == ("AdminControl", "invoke"):
                parsed = self._facts.check_invoke(args)
            if (self._name, method) == ("AdminConfig", "modify") and args and args[0] in self._config.resource_props:
                name = self._config.resource_props[args[0]][0]
                self._facts.check_resource_property([["name", name]] + [list(a) for a in args[1]])
            self._calls.append([self._name, method, list(args), parsed])
            return self._config.answer(self._name, method, args)
        return call


class Config(object):
    """The configuration the fake pretends to hold: one cell, node and server, as a fresh profile has."""

    def __init__(self, cell="cell01", node="node01", server="server1", properties=()):
        self.cell, self.node, self.server = cell, node, server
        self.created = 0
        # one DB2 data source as a fresh JDBC provider's wizard leaves it: id -> (name, value) of its properties
        self.datasource = "TradeDataSource(cells/%s|resources.xml#DataSource_1)" % cell
        self.propset = "(cells/%s|resources.xml#J2EEResourcePropertySet_1)" % cell
        self.resource_props = dict(("(cells/%s|resources.xml#J2EEResourceProperty_%d)" % (cell, i), pair)
                                   for i, pair in enumerate([("databaseName", "TRADEDB"), ("serverName", "db2host"),
                                                             ("portNumber", "50000"), ("driverType", "4")]))
        # JVM custom properties already present: id -> name
        self.properties = dict(("(cells/%s|server.xml#Property_%d)" % (cell, i), name)
                               for i, name in enumerate(properties))
        # a web server definition on the node, with the plug-in keystore WebSphere makes for it and its signers
        self.webserver = "webserver1"
        self.webserver_scope = "(cell):%s:(node):%s:(server):%s" % (cell, node, self.webserver)
        self.signers = {("CMSKeyStore", self.webserver_scope): ["root"]}

    def signer_list(self, pairs):
        key = (pairs.get("keyStoreName"), pairs.get("keyStoreScope", ""))
        return "\n".join("[ [alias %s] [issuedTo [CN=%s]] ]" % (a, a) for a in self.signers.get(key, []))

    def answer(self, obj, method, args):
        server_id = "(cells/%s/nodes/%s/servers/%s|server.xml#Server_1)" % (self.cell, self.node, self.server)
        jvm_id = "(cells/%s/nodes/%s/servers/%s|server.xml#JavaVirtualMachine_1)" % (
            self.cell, self.node, self.server)
        if (obj, method) == ("AdminConfig", "getid"):
            path = args[0]
            if path == "/Node:%s/Server:%s/" % (self.node, self.server):
                return server_id
            if path in ("/Cell:%s/" % self.cell, "/Cell:/"):
                return "%s(cells/%s|cell.xml#Cell_1)" % (self.cell, self.cell)
            if path == "/DataSource:TradeDataSource/":
                return self.datasource
            if path == "/Node:%s/" % self.node:
                return "%s(cells/%s/nodes/%s|node.xml#Node_1)" % (self.node, self.cell, self.node)
            if path == "/Node:%s/Server:%s/" % (self.node, self.webserver):
                return "%s(cells/%s/nodes/%s/servers/%s|server.xml#Server_2)" % (
                    self.webserver, self.cell, self.node, self.webserver)
            return ""
        cell_id = "%s(cells/%s|cell.xml#Cell_1)" % (self.cell, self.cell)
        if (obj, method) == ("AdminConfig", "list"):
            if args[0] == "JavaVirtualMachine" and len(args) > 1 and args[1] == server_id:
                return jvm_id
            if args[0] == "Property" and len(args) > 1 and args[1] == jvm_id:
                return "\n".join(sorted(self.properties))
            if args[0] == "Cell":
                return cell_id
            if args[0] == "J2EEResourceProperty" and len(args) > 1 and args[1] == self.propset:
                return "\n".join(sorted(self.resource_props))
            return ""
        if (obj, method) == ("AdminConfig", "showAttribute"):
            if args[0] == cell_id and args[1] == "name":
                return self.cell
            if args[0] in self.properties and args[1] == "name":
                return self.properties[args[0]]
            if args[0] == self.datasource and args[1] == "propertySet":
                return self.propset
            if args[0] in self.resource_props and args[1] in ("name", "value"):
                return self.resource_props[args[0]][0 if args[1] == "name" else 1]
            return ""
        if (obj, method) == ("AdminConfig", "create"):
            self.created += 1
            return "(cells/%s|x.xml#%s_%d)" % (self.cell, args[0], self.created)
        if (obj, method) == ("AdminControl", "getCell"):
            return self.cell
        if (obj, method) == ("AdminControl", "getNode"):
            return self.node
        if obj == "AdminTask":
            return self.answer_task(method, dict(parse_task_args(args[0] if args else "")))
        if (obj, method) == ("AdminControl", "completeObjectName"):
            wanted = dict(p.split("=", 1) for p in args[0].split(",") if "=" in p)
            if wanted.get("type") == "PluginCfgGenerator":
                return ("WebSphere:name=PluginCfgGenerator,process=dmgr,node=dmgrNode01,type=PluginCfgGenerator,"
                        "cell=%s" % self.cell)
            if wanted.get("type") == "NodeSync" and wanted.get("node") == self.node:
                return "WebSphere:name=nodeSync,process=nodeagent,type=NodeSync,node=%s,cell=%s" % (
                    self.node, self.cell)
            return ""
        if (obj, method) == ("AdminControl", "invoke") and args[1] == "propagateKeyring":
            cell, node, server = args[2].split()[1:4]
            if (cell, node, server) != (self.cell, self.node, self.webserver):
                raise WsadminError("No web server %s on node %s in cell %s" % (server, node, cell))
        return ""

    def answer_task(self, method, pairs):
        if method == "listKeyStores" and pairs.get("scopeName") == self.webserver_scope:
            return "CMSKeyStore(cells/%s|security.xml#KeyStore_2)" % self.cell
        if method == "listSignerCertificates":
            return self.signer_list(pairs)
        if method == "addSignerCertificate":
            key = (pairs["keyStoreName"], pairs.get("keyStoreScope", ""))
            if pairs["certificateAlias"] in self.signers.get(key, []):
                raise WsadminError("alias %s exists in %s already" % (pairs["certificateAlias"], key[0]))
            self.signers.setdefault(key, []).append(pairs["certificateAlias"])
        return ""


def run_script(path, argv, facts, properties=(), env=None):
    import os
    env = env or {}
    saved_env = dict((k, os.environ.get(k)) for k in env)
    for k, v in env.items():
        os.environ[k] = v
    try:
        return _run_script(path, argv, facts, properties)
    finally:
        for k, v in saved_env.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def _run_script(path, argv, facts, properties=()):
    calls = []
    config = Config(properties=properties)
    scope = {"__name__": "__main__"}
    for name in ("AdminConfig", "AdminTask", "AdminControl"):
        scope[name] = Recorder(name, facts, calls, config)
    out, err = StringIO(), StringIO()
    saved = sys.argv, sys.stdout, sys.stderr
    sys.argv, sys.stdout, sys.stderr = list(argv), out, err
    status, error = 0, ""
    try:
        execfile(path, scope)  # noqa: F821 - a Jython 2.7 builtin
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:
        status, error = 1, "%s: %s" % (type(exc).__name__, exc)
    finally:
        sys.argv, sys.stdout, sys.stderr = saved
    return {"status": status, "error": error, "stdout": out.getvalue(), "stderr": err.getvalue(), "calls": calls}


def run_all(plan_path):
    with open(plan_path) as fh:
        plan = json.load(fh)
    facts = Facts(plan["commands_csv"], plan["ciphers"], plan.get("jdbc_properties", ()))
    results = {}
    for case in plan["cases"]:
        results[case["id"]] = run_script(case["script"], case["argv"], facts, case.get("properties", ()),
                                         case.get("env"))
    sys.stdout.write(json.dumps(results))


if __name__ == "__main__":
    run_all(sys.argv[1])
