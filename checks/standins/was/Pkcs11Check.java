// Loads a PKCS#11 token configuration file into OpenJDK's SunPKCS11 (the same file format as IBM's
// IBMPKCS11Impl) against openCryptoki, logs in with TOKEN_USER_PIN from the environment, generates an RSA key
// pair in the token, signs with it (RSASSA-PSS), and lists which mechanisms back the provider's services. Then it loads the
// same file without its disabledMechanisms block and reports, per disabled mechanism, whether the token would
// otherwise have offered it. Run with: java Pkcs11Check.java CONFIG...  (single-file launch: no javac needed).
// Output per file: "== CONFIG", then one "key: value" per line; a failure prints "error: ...".
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.Provider;
import java.security.Security;
import java.security.Signature;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Pkcs11Check {
    static final Pattern MECH = Pattern.compile("\\((CKM_[A-Z0-9_]+)\\)\\s*$");
    static final Pattern DISABLED = Pattern.compile("disabledMechanisms\\s*=\\s*\\{([^}]*)\\}", Pattern.DOTALL);

    static boolean signAndVerify(String alg, PSSParameterSpec spec, KeyPair kp, Provider p) throws Exception {
        Signature sig = Signature.getInstance(alg, p);
        if (spec != null) sig.setParameter(spec);
        sig.initSign(kp.getPrivate());
        sig.update("zrunbook".getBytes());
        byte[] signature = sig.sign();
        Signature verify = Signature.getInstance(alg, p);
        if (spec != null) verify.setParameter(spec);
        verify.initVerify(kp.getPublic());
        verify.update("zrunbook".getBytes());
        return verify.verify(signature);
    }

    static TreeSet<String> mechanisms(Provider p) {
        TreeSet<String> found = new TreeSet<>();
        for (Provider.Service s : p.getServices()) {
            Matcher m = MECH.matcher(s.toString().strip());
            if (m.find()) found.add(m.group(1));
        }
        return found;
    }

    public static void main(String[] args) {
        for (String config : args) {  // several files, one JVM: a JVM start is slow, above all under qemu
            System.out.println("== " + config);
            try {
                run(Path.of(config));
            } catch (Exception e) {
                Throwable root = e;
                while (root.getCause() != null) root = root.getCause();
                System.out.println("error: " + e + (root != e ? " | cause: " + root : ""));
            }
        }
    }

    static void run(Path config) throws Exception {
        String pin = System.getenv("TOKEN_USER_PIN");
        if (pin == null || pin.isEmpty()) throw new IllegalStateException("set TOKEN_USER_PIN");
        String text = Files.readString(config);
        Provider p = Security.getProvider("SunPKCS11").configure(config.toString());
        Security.addProvider(p);
        System.out.println("provider: " + p.getName());
        System.out.println("info: " + p.getInfo());

        KeyStore ks = KeyStore.getInstance("PKCS11", p);
        ks.load(null, pin.toCharArray());
        System.out.println("login: ok");

        KeyPairGenerator kpg = KeyPairGenerator.getInstance("RSA", p);
        kpg.initialize(2048);
        KeyPair kp = kpg.generateKeyPair();
        System.out.println("rsa-key: " + kp.getPrivate().getClass().getSimpleName() + " " + kp.getPrivate());
        // RSASSA-PSS is what a TLS 1.3 server (and a TLS 1.2 one with rsa_pss_rsae) signs with.
        PSSParameterSpec pss = new PSSParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, 32, 1);
        System.out.println("sign-verify: " + (signAndVerify("RSASSA-PSS", pss, kp, p) ? "ok" : "FAILED"));
        try {  // PKCS#1 v1.5 (TLS 1.2 rsa_pkcs1_sha256): reported, not required
            System.out.println("pkcs1-sign: " + (signAndVerify("SHA256withRSA", null, kp, p) ? "ok" : "FAILED"));
        } catch (Exception e) {
            System.out.println("pkcs1-sign: " + e);
        }

        TreeSet<String> used = mechanisms(p);
        System.out.println("mechanisms: " + String.join(" ", used));
        List<String> disabled = new ArrayList<>();
        Matcher d = DISABLED.matcher(text);
        if (d.find()) for (String w : d.group(1).trim().split("\\s+")) if (!w.isEmpty()) disabled.add(w);
        System.out.println("disabled: " + String.join(" ", disabled));

        // The same configuration without the block: which of the disabled mechanisms would the token offer?
        Path baseline = Files.createTempFile("pkcs11-baseline", ".cfg");
        Files.writeString(baseline, DISABLED.matcher(text).replaceAll("")
                .replaceFirst("(?m)^name\\s*=\\s*(\\S+)", "name = $1-baseline"));
        Provider b = Security.getProvider("SunPKCS11").configure(baseline.toString());
        TreeSet<String> offered = mechanisms(b);
        for (String m : disabled) {
            String state = used.contains(m) ? "PRESENT" : offered.contains(m) ? "absent (token offers it)"
                                                                               : "absent (token does not offer it)";
            System.out.println("mechanism " + m + ": " + state);
        }
        Files.delete(baseline);
    }
}
