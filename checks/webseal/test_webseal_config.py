"""WebSEAL's configuration, junctions, ACL and LDAP database commands, read and validated (no WebSEAL here).

WebSEAL, pdadmin, GSKit and Db2 cannot be installed on the runbook's hosts, so these checks read the
snippets: the stanza file against facts/webseal/webseald-stanzas.csv, the pdadmin commands against
pdadmin-commands.csv, the GSKit command with the IHS chapter's validator, the Db2 statements with the Db2
chapter's CLP validator (extended in ldap_db.py), and the labels and library across the snippets. The
study's own mistakes are the negative cases in checks/webseal/bad/.
"""

from pathlib import Path

import pytest

from zrunbook import SNIPPETS
from zrunbook.formats import gskit
from zrunbook.webseal import labels, ldap_db, pdadmin, stanza

ROOT = Path(__file__).resolve().parents[2]
BAD = Path(__file__).parent / "bad"
CURRENT_CONF = "webseal/conf/webseald-pkcs11-current.conf"
STUDY_CONF = "webseal/conf/webseald-pkcs11-2007.conf"
CERT = "webseal/token/create-webseal-certificate.sh"
IHS_CERT = "ihs/gskit/create-token-certificate.sh"


def read(rel: str) -> str:
    return (SNIPPETS / rel).read_text(encoding="utf-8")


@pytest.mark.snippet(CURRENT_CONF, checker="webseald-conf")
def test_recommended_webseald_entries_hold_no_pin_and_name_the_obfuscated_database():
    entries = stanza.entries(read(CURRENT_CONF))
    assert ("ssl", "pkcs11-token-pwd") not in entries
    assert entries[("configuration-database", "file")][0].endswith(".obf")
    assert not any("pwd" in key or "password" in key for _s, key in entries)


@pytest.mark.snippet(STUDY_CONF, checker="webseald-conf")
def test_study_webseald_entries_are_valid_but_keep_the_pin_in_clear_text():
    assert stanza.validate(read(STUDY_CONF), clear_secrets=True) == []
    problems = stanza.validate(read(STUDY_CONF))
    assert len(problems) == 1
    assert "pkcs11-token-pwd holds a password in clear text" in problems[0]


def test_stanza_validator_rejects_a_misspelt_key_and_names_the_right_one():
    problems = stanza.validate((BAD / "webseald-misspelt-symmetric-key.conf").read_text())
    assert problems == [p for p in problems if "did you mean 'pkcs11-symmetric-cipher-support'" in p]
    assert len(problems) == 1


def test_stanza_validator_rejects_the_study_listing_as_printed():
    problems = "\n".join(stanza.validate((BAD / "webseald-2007-as-printed.conf").read_text()))
    assert "'unix-group' stands before any [stanza] header" in problems
    assert "'webseal-cert-keyfile-label' stands before any [stanza] header" in problems
    assert "default = 'AES-128 or DES-168'" in problems
    assert "(user PIN set during token initialization)" in problems


def webseal_settings() -> dict[str, str]:
    """The settings the WebSEAL wrapper exports to the IHS chapter's certificate script."""
    return labels.exported_settings(read(CERT))


@pytest.mark.snippet(CERT, IHS_CERT, checker="gskit-cmd")
def test_certificate_step_uses_documented_gskit_commands_and_the_pin_from_the_environment():
    text = read(IHS_CERT)
    actions = [c.args[:2] for c in gskit.commands(text, webseal_settings())]
    assert actions == [["-cert", "-list"], ["-cert", "-create"], ["-cert", "-details"]]
    assert [c.raw[0] for c in gskit.commands(text, webseal_settings())] == ['$GSKCAPICMD'] * 3
    assert gskit.validate(text, preset=webseal_settings()) == []


@pytest.mark.snippet(CURRENT_CONF, CERT, IHS_CERT, checker="webseal-labels")
def test_webseald_names_the_token_certificate_and_library_the_certificate_step_creates():
    # the step looks for the library; webseald-pkcs11-current.conf names the RHEL/SLES one
    rhel_sles = {"PKCS11_LIB": gskit.library_candidates(read(IHS_CERT))["rhel-sles"]}
    made = gskit.created({IHS_CERT: read(IHS_CERT)}, preset=webseal_settings() | rhel_sles)
    entries = stanza.entries(read(CURRENT_CONF))
    token, label = entries[("ssl", "webseal-cert-keyfile-label")][0].split(":")
    assert entries[("ssl", "pkcs11-token-label")] == [made["token"][0]] == [token]
    assert label == made["label"][0]
    assert entries[("ssl", "pkcs11-driver-path")] == [made["crypto"][0]]


@pytest.mark.negative("ihs/gskit/create-token-certificate.sh",
                      expects="the label check fails when the wrapper does not export its labels")
@pytest.mark.uses("ihs/gskit/create-token-certificate.sh", "webseal/conf/webseald-pkcs11-current.conf",
                  "webseal/token/create-webseal-certificate.sh")
def test_label_check_fails_when_the_wrapper_does_not_export_its_labels():
    unexported = read(CERT).replace("export GSKCAPICMD TOKEN_LABEL CERT_LABEL SERVER_NAME", "export GSKCAPICMD")
    made = gskit.created({IHS_CERT: read(IHS_CERT)}, preset=labels.exported_settings(unexported))
    assert made["token"][0] == "IBMICATOK"  # the IHS default, which webseald.conf does not name
    assert "token label: the certificate step creates 'IBMICATOK', webseald.conf names 'websealserver'" in \
        labels.label_problems(unexported, read(CURRENT_CONF))


@pytest.mark.snippet("webseal/pdadmin/create-junctions.sh", checker="pdadmin")
def test_junctions_are_tcp_tcp_with_all_identity_headers_and_ssl():
    cmds = [c.words for c in pdadmin.commands(read("webseal/pdadmin/create-junctions.sh")) if "create" in c.words]
    kinds = [(w[w.index("-t") + 1], w[w.index("-c") + 1] if "-c" in w else None) for w in cmds]
    assert kinds == [("tcp", None), ("tcp", "all"), ("ssl", None)]


def test_pdadmin_validator_rejects_a_junction_without_its_host():
    problems = pdadmin.validate((BAD / "junction-without-host.sh").read_text())
    assert problems
    assert all("-h (back-end host) is required" in p for p in problems)


def test_pdadmin_validator_rejects_the_study_acl_attach_and_its_literal_password():
    problems = "\n".join(pdadmin.validate((BAD / "acl-attach-study-extra-word.sh").read_text()))
    assert "got 3 arguments" in problems
    assert "-p must come from an environment variable, not 'lsc2lsc'" in problems


def test_pdadmin_validator_rejects_unknown_action_letters_and_a_group_entry_without_name():
    problems = "\n".join(pdadmin.validate((BAD / "acl-unknown-action-letter.sh").read_text()))
    assert "unknown action letters 'z'" in problems
    assert "'set group' takes a name and permissions" in problems


@pytest.mark.snippet("webseal/ldap-db/create-ldap-database.clp", checker="ldap-db2-clp")
def test_ldap_table_space_uses_a_buffer_pool_with_its_page_size():
    parsed, _ = ldap_db.clp.commands(read("webseal/ldap-db/create-ldap-database.clp"), "current")
    text = " ".join(c.text.upper() for c in parsed)
    assert "CREATE BUFFERPOOL LDAPBP IMMEDIATE SIZE 1230 PAGESIZE 32K" in text
    assert "PAGESIZE 32K MANAGED BY AUTOMATIC STORAGE BUFFERPOOL LDAPBP" in text


def test_ldap_db_validator_rejects_the_study_commands_as_printed():
    problems = "\n".join(ldap_db.validate((BAD / "ldap-db-2007-as-printed.sh").read_text(), "current"))
    assert "CREATE BUFFERPOOL before CONNECT TO" in problems
    assert "EXTENDED STORAGE no longer exists" in problems
    assert "No closing quotation" in problems


def test_ldap_db_validator_rejects_a_32k_table_space_without_a_32k_buffer_pool():
    text = (BAD / "ldap-db-32k-tablespace-without-bufferpool.clp").read_text()
    problems = "\n".join(ldap_db.validate(text, "current"))
    assert "names no BUFFERPOOL" in problems
    assert "names no containers" in problems


def test_ldap_db_validator_rejects_out_of_range_heap_and_buffer_pool_without_connection():
    problems = "\n".join(ldap_db.validate((BAD / "ldap-db-bufferpool-before-connect.clp").read_text(), "current"))
    assert "APPLHEAPSZ 10 is outside 16..60000" in problems
    assert "CREATE BUFFERPOOL before CONNECT TO" in problems
