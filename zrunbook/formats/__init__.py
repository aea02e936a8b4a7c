"""Formats more than one chapter reads: GSKit's command lines and stash rules (IHS, WebSEAL), Db2's CLP scripts (Db2,
WebSEAL's registry on Db2), lsdasd's output (Db2's disks, the crypto chapter's recorded hosts) and the JDK's
java.security (WebSphere, CICS TG). Chapter packages import these, never each other."""
