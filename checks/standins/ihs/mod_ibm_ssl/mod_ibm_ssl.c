/*
 * mod_ibm_ssl lint: a stand-in for IBM HTTP Server's mod_ibm_ssl that only checks configuration.
 *
 * IHS cannot be installed on the runbook's container hosts, so `httpd -t` there would reject every
 * mod_ibm_ssl directive as unknown. This module registers those directives under IHS's module name
 * (LoadModule ibm_ssl_module modules/mod_ibm_ssl.so) with IHS's argument forms and validates the
 * values: protocol and cipher names from the facts tables (checks/ihs/facts/*.csv, compiled in as
 * ibm_ssl_facts.h by checks/standins/ihs/ihs_lint.py), the token:label form, files that must exist, a
 * PKCS#11 driver that loads, and numbers within the range the directive table gives (SSLV3Timeout). A check_config hook then checks each SSL virtual host as merged:
 * a KeyFile is set, and SSLServerCert names token:label while SSLPKCSDriver is set.
 * It serves nothing and does no TLS. Built with `apxs -c` inside the container at test time.
 */
#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"
#include "apr_dso.h"
#include "apr_file_info.h"
#include "ap_config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

/* The longest path an AF_UNIX socket address holds: sun_path less its terminating NUL. */
#define SUN_PATH_MAX ((int)sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

#include "ibm_ssl_facts.h" /* IBM_SSL_PROTOCOLS[], IBM_SSL_CIPHERS[], IBM_SSL_RANGES[] (NULL-terminated) */

module AP_MODULE_DECLARE_DATA ibm_ssl_module;

typedef struct {
    int enable; /* -1 unset, 0 SSLDisable, 1 SSLEnable */
    const char *keyfile;
    const char *stashfile;
    const char *servercert;
    const char *pkcs_driver;
    const char *where; /* file:line of SSLServerCert, for messages */
} ibm_ssl_conf;

static void *create_conf(apr_pool_t *p, server_rec *s)
{
    ibm_ssl_conf *c = apr_pcalloc(p, sizeof(*c));
    c->enable = -1;
    return c;
}

static void *merge_conf(apr_pool_t *p, void *basev, void *addv)
{
    ibm_ssl_conf *base = basev, *add = addv, *c = apr_pcalloc(p, sizeof(*c));
    c->enable = add->enable != -1 ? add->enable : base->enable;
    c->keyfile = add->keyfile ? add->keyfile : base->keyfile;
    c->stashfile = add->stashfile ? add->stashfile : base->stashfile;
    c->servercert = add->servercert ? add->servercert : base->servercert;
    c->where = add->servercert ? add->where : base->where;
    c->pkcs_driver = add->pkcs_driver ? add->pkcs_driver : base->pkcs_driver;
    return c;
}

static ibm_ssl_conf *conf_of(cmd_parms *cmd)
{
    return ap_get_module_config(cmd->server->module_config, &ibm_ssl_module);
}

static const char *where(cmd_parms *cmd)
{
    return apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename, cmd->directive->line_num);
}

static const char *existing_file(cmd_parms *cmd, const char *path)
{
    apr_finfo_t finfo;
    const char *full = ap_server_root_relative(cmd->pool, path);
    if (!full || apr_stat(&finfo, full, APR_FINFO_TYPE, cmd->pool) != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "%s: file %s does not exist", cmd->cmd->name, full ? full : path);
    if (finfo.filetype != APR_REG && finfo.filetype != APR_LNK)
        return apr_psprintf(cmd->pool, "%s: %s is not a regular file", cmd->cmd->name, full);
    return NULL;
}

static int is_protocol(const char *name)
{
    const char *const *p;
    for (p = IBM_SSL_PROTOCOLS; *p; p++)
        if (!strcasecmp(*p, name))
            return 1;
    return 0;
}

/* The cipher's protocol set ("tls10 tls11 tls12"), or NULL when the name is not in the table. */
static const char *cipher_protocols(const char *name)
{
    const struct ibm_ssl_cipher *c;
    for (c = IBM_SSL_CIPHERS; c->long_name; c++)
        if (!strcmp(c->long_name, name) || !strcasecmp(c->short_name, name))
            return c->protocols;
    return NULL;
}

/* GSKit's error for the cipher after protocol key ("13 GSK_INVALID_PARAMETER", from the facts table's
 * gskit_8_0_60 column), or NULL when GSKit accepted it there. */
static const char *gskit_refusal(apr_pool_t *p, const char *name, const char *key)
{
    const struct ibm_ssl_cipher *c;
    const char *at, *end;
    for (c = IBM_SSL_CIPHERS; c->long_name; c++) {
        if (strcmp(c->long_name, name) && strcasecmp(c->short_name, name))
            continue;
        if (!(at = strstr(c->gskit_refused, apr_pstrcat(p, key, "=", NULL))))
            return NULL;
        at += strlen(key) + 1;
        end = strchr(at, ';');
        return end ? apr_pstrndup(p, at, end - at) : at;
    }
    return NULL;
}

/* "TLSv12" -> "tls12", "TLSv1" -> "tls10"; NULL for SSLv2/SSLv3/ALL (no check then). */
static const char *protocol_key(apr_pool_t *p, const char *proto)
{
    if (!strcasecmp(proto, "TLSv1") || !strcasecmp(proto, "TLSv10"))
        return "tls10";
    if (!strncasecmp(proto, "TLSv1", 5))
        return apr_psprintf(p, "tls%s", proto + 4);
    return NULL;
}

static const char *set_enable(cmd_parms *cmd, void *dc)
{
    conf_of(cmd)->enable = 1;
    return NULL;
}

static const char *set_disable(cmd_parms *cmd, void *dc)
{
    conf_of(cmd)->enable = 0;
    return NULL;
}

static const char *set_keyfile(cmd_parms *cmd, void *dc, const char *a1, const char *a2)
{
    const char *path = a1, *err;
    if (a2) {
        if (strcmp(a1, "/prompt"))
            return "KeyFile takes a path, or /prompt and a path";
        path = a2;
    }
    if ((err = existing_file(cmd, path)))
        return err;
    conf_of(cmd)->keyfile = path;
    return NULL;
}

static const char *set_stashfile(cmd_parms *cmd, void *dc, const char *path)
{
    const char *err = existing_file(cmd, path);
    if (err)
        return err;
    conf_of(cmd)->stashfile = path;
    return NULL;
}

static const char *check_label(cmd_parms *cmd, const char *value)
{
    const char *colon = strchr(value, ':');
    if (!*value)
        return "SSLServerCert: empty certificate label";
    if (colon) {
        if (colon == value)
            return apr_psprintf(cmd->pool, "SSLServerCert %s: the token label before ':' is empty", value);
        if (!colon[1])
            return apr_psprintf(cmd->pool, "SSLServerCert %s: the certificate label after ':' is empty", value);
        if (strchr(colon + 1, ':'))
            return apr_psprintf(cmd->pool, "SSLServerCert %s: write token:label with one ':'", value);
    }
    return NULL;
}

static const char *set_servercert(cmd_parms *cmd, void *dc, const char *a1, const char *a2)
{
    const char *err = check_label(cmd, a1);
    if (!err && a2)
        err = check_label(cmd, a2);
    if (err)
        return err;
    conf_of(cmd)->servercert = a1;
    conf_of(cmd)->where = where(cmd);
    return NULL;
}

static const char *set_pkcs_driver(cmd_parms *cmd, void *dc, const char *path)
{
    apr_dso_handle_t *dso;
    apr_dso_handle_sym_t sym;
    char buf[256];
    const char *err;
    if (path[0] != '/')
        return apr_psprintf(cmd->pool, "SSLPKCSDriver %s: give the library's absolute path", path);
    if ((err = existing_file(cmd, path)))
        return err;
    if (apr_dso_load(&dso, path, cmd->pool) != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "SSLPKCSDriver %s does not load: %s", path,
                            apr_dso_error(dso, buf, sizeof(buf)));
    if (apr_dso_sym(&sym, dso, "C_GetFunctionList") != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "SSLPKCSDriver %s is not a PKCS#11 library (no C_GetFunctionList)", path);
    conf_of(cmd)->pkcs_driver = path;
    return NULL;
}

static const char *set_protocol(cmd_parms *cmd, void *dc, const char *name)
{
    if (!is_protocol(name))
        return apr_psprintf(cmd->pool, "%s: unknown protocol %s (IHS spells them SSLv2 SSLv3 TLSv10 "
                            "TLSv11 TLSv12 TLSv13)", cmd->cmd->name, name);
    return NULL;
}

/* SSLCipherSpec name | [protocol|ALL] NONE | [protocol|ALL] [+|-]name... */
static const char *set_cipherspec(cmd_parms *cmd, void *dc, const char *args)
{
    const char *proto = NULL, *key = NULL, *word;
    int n = 0;
    while (*args && (word = ap_getword_conf(cmd->temp_pool, &args)) && *word) {
        const char *name = word, *protos, *refusal;
        if (n == 0 && (!strcasecmp(word, "ALL") || is_protocol(word))) {
            proto = word;
            key = protocol_key(cmd->pool, word);
            continue;
        }
        n++;
        if (!strcasecmp(word, "NONE")) {
            if (!proto || n != 1 || *args)
                return "SSLCipherSpec: NONE stands alone after a protocol or ALL (SSLCipherSpec ALL NONE)";
            return NULL;
        }
        if (*name == '+' || *name == '-')
            name++;
        if (!(protos = cipher_protocols(name)))
            return apr_psprintf(cmd->pool, "SSLCipherSpec: unknown cipher %s", name);
        if (key && !strstr(protos, key))
            return apr_psprintf(cmd->pool, "SSLCipherSpec: cipher %s is not valid for %s", name, proto);
        /* IBM's table lists the cipher for this protocol, and only the project's harness (GSKit under
         * checks/standins/ihs/gskit_server.py's mapping of the directives) refused it: IHS's own mod_ibm_ssl and GSKit
         * were not run, so this is a warning naming the harness, not a rejection. */
        if (key && (refusal = gskit_refusal(cmd->temp_pool, name, key)))
            ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_WARNING, 0, NULL,
                         "%s: SSLCipherSpec: warning: IBM's table lists cipher %s for %s, but GSKit " IBM_SSL_GSKIT
                         " under the project's harness (checks/standins/ihs/gskit_server.py) refused it (%s, "
                         "facts/ihs/ihs-ciphers.csv); IHS itself was not run, so start your IHS to find out",
                         where(cmd), name, proto, refusal);
    }
    if (n == 0)
        return "SSLCipherSpec needs at least one cipher (or NONE)";
    return NULL;
}

static const char *set_clientauth(cmd_parms *cmd, void *dc, const char *a1, const char *a2)
{
    static const char *const modes[] = {"none", "optional", "required", "0", "1", "2", NULL};
    const char *const *m;
    for (m = modes; *m; m++)
        if (!strcasecmp(*m, a1))
            break;
    if (!*m)
        return apr_psprintf(cmd->pool, "SSLClientAuth: %s is not none, optional or required", a1);
    if (a2 && strcasecmp(a2, "crl") && strcasecmp(a2, "noverify"))
        return apr_psprintf(cmd->pool, "SSLClientAuth: second argument %s is not crl or noverify", a2);
    return NULL;
}

static int is_integer(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static const char *set_attribute(cmd_parms *cmd, void *dc, const char *a1, const char *a2)
{
    if (!is_integer(a1) || !is_integer(a2))
        return apr_psprintf(cmd->pool, "SSLAttributeSet takes two numbers (attribute value), not %s %s", a1, a2);
    return NULL;
}

/* A whole number within the range the directive table gives for this directive (IBM_SSL_RANGES). */
static const char *set_ranged_number(cmd_parms *cmd, void *dc, const char *arg)
{
    const struct ibm_ssl_range *r;
    long value;
    for (r = IBM_SSL_RANGES; r->directive; r++)
        if (!strcasecmp(r->directive, cmd->cmd->name))
            break;
    if (!r->directive)
        return apr_psprintf(cmd->pool, "%s: no range in the directive table", cmd->cmd->name);
    if (!is_integer(arg) || strlen(arg) > 9)
        return apr_psprintf(cmd->pool, "%s takes a number of seconds (%ld-%ld), not %s", cmd->cmd->name,
                            r->min, r->max, arg);
    value = atol(arg);
    if (value < r->min || value > r->max)
        return apr_psprintf(cmd->pool, "%s %s is out of range (%ld-%ld seconds)", cmd->cmd->name, arg,
                            r->min, r->max);
    return NULL;
}

static const char *set_noop(cmd_parms *cmd, void *dc)
{
    return NULL;
}

static const char *set_cache_port_filename(cmd_parms *cmd, void *dc, const char *arg)
{
    /* IHS 9.0.5 still documents sidd and this directive (its message SSL0603E names it for choosing another
     * socket): the argument is the file name of sidd's AF_UNIX socket, which must fit sun_path (unix(7)). */
    if (strlen(arg) > SUN_PATH_MAX)
        return apr_psprintf(cmd->pool, "%s %s is too long for a Unix socket path (%lu bytes, at most %d)",
                            cmd->cmd->name, arg, (unsigned long)strlen(arg), SUN_PATH_MAX);
    return NULL;
}

static int check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    int bad = 0;
    for (; s; s = s->next) {
        ibm_ssl_conf *c = ap_get_module_config(s->module_config, &ibm_ssl_module);
        const char *name = s->server_hostname ? s->server_hostname : "(main server)";
        if (c->enable != 1)
            continue;
        if (!c->keyfile) {
            ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_EMERG, 0, NULL,
                         "ibm_ssl lint: SSL virtual host %s (%s:%d) has no KeyFile", name,
                         s->defn_name ? s->defn_name : "?", s->defn_line_number);
            bad = 1;
        }
        if (c->pkcs_driver && c->servercert && !strchr(c->servercert, ':')) {
            ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_EMERG, 0, NULL,
                         "ibm_ssl lint: SSLServerCert %s (%s) names no token although SSLPKCSDriver is set: "
                         "write token_label:certificate_label", c->servercert, c->where);
            bad = 1;
        }
        if (c->pkcs_driver && c->servercert && strchr(c->servercert, ':') && !c->stashfile) {
            ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_EMERG, 0, NULL,
                         "ibm_ssl lint: SSLServerCert %s (%s) is in a token but no SSLStashfile holds its PIN",
                         c->servercert, c->where);
            bad = 1;
        }
    }
    return bad ? HTTP_INTERNAL_SERVER_ERROR : OK;
}

static const command_rec ibm_ssl_cmds[] = {
    AP_INIT_NO_ARGS("SSLEnable", set_enable, NULL, RSRC_CONF, "enable SSL for this server"),
    AP_INIT_NO_ARGS("SSLDisable", set_disable, NULL, RSRC_CONF, "disable SSL for this server"),
    AP_INIT_TAKE12("KeyFile", set_keyfile, NULL, RSRC_CONF, "[/prompt] key database path"),
    AP_INIT_TAKE1("SSLStashfile", set_stashfile, NULL, RSRC_CONF, "stash file with the token PIN"),
    AP_INIT_TAKE12("SSLServerCert", set_servercert, NULL, RSRC_CONF, "label or token:label [second label]"),
    AP_INIT_TAKE1("SSLPKCSDriver", set_pkcs_driver, NULL, RSRC_CONF, "PKCS#11 library path"),
    AP_INIT_ITERATE("SSLProtocolDisable", set_protocol, NULL, RSRC_CONF, "protocols to disable"),
    AP_INIT_ITERATE("SSLProtocolEnable", set_protocol, NULL, RSRC_CONF, "protocols to enable"),
    AP_INIT_RAW_ARGS("SSLCipherSpec", set_cipherspec, NULL, RSRC_CONF, "[protocol|ALL] NONE | [+|-]cipher..."),
    AP_INIT_TAKE12("SSLClientAuth", set_clientauth, NULL, RSRC_CONF, "none|optional|required [crl|noverify]"),
    AP_INIT_TAKE2("SSLAttributeSet", set_attribute, NULL, RSRC_CONF, "GSKit attribute number and value"),
    AP_INIT_NO_ARGS("SSLTrace", set_noop, NULL, RSRC_CONF, "trace SSL"),
    AP_INIT_NO_ARGS("SSLFIPSEnable", set_noop, NULL, RSRC_CONF, "FIPS mode"),
    AP_INIT_NO_ARGS("SSLFIPSDisable", set_noop, NULL, RSRC_CONF, "no FIPS mode"),
    AP_INIT_TAKE1("SSLV3Timeout", set_ranged_number, NULL, RSRC_CONF,
                  "seconds a TLS session may be resumed (session ID cache)"),
    AP_INIT_TAKE1("SSLCachePortFilename", set_cache_port_filename, NULL, RSRC_CONF,
                  "file name of the socket of the session ID cache daemon (sidd)"),
    {NULL}
};

static void register_hooks(apr_pool_t *p)
{
    ap_hook_check_config(check_config, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(ibm_ssl) = {
    STANDARD20_MODULE_STUFF,
    NULL, NULL, create_conf, merge_conf, ibm_ssl_cmds, register_hooks
};
