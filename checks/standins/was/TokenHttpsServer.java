// A small HTTPS server that stands in for WebSphere's HTTPS transport with the PKCS#11 provider configured as
// the WAS pages say (WebSphere itself cannot be installed in the checks).
// Run: TOKEN_USER_PIN=... java TokenHttpsServer CONFIG PORT PROTOCOLS SUITES [PKCS12_FILE]
//   CONFIG     the token configuration file (the same file IBMPKCS11Impl reads; here OpenJDK's SunPKCS11)
//   PROTOCOLS  comma-separated, e.g. TLSv1.2,TLSv1.3; SUITES comma-separated, as the wsadmin script sets them
//   PKCS12_FILE  the study's way: the server key in a PKCS#12 file (password in KEYSTORE_PASSWORD) instead of
//              the token's keystore
// PROVIDER_POSITION=last (default, the current java.security) or first (the study's) places the token's provider.
// Prints "key: ..." (the key the server presents) and "listening: PORT" when ready; answers every request with
// one line.
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.io.FileInputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.Provider;
import java.security.Security;
import java.util.Collections;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

public class TokenHttpsServer {
    public static void main(String[] a) throws Exception {
        Provider p = Security.getProvider("SunPKCS11").configure(a[0]);
        if ("first".equals(System.getenv("PROVIDER_POSITION"))) {
            Security.insertProviderAt(p, 1);
        } else {
            Security.addProvider(p);
        }
        KeyStore ks;
        char[] pin;
        if (a.length > 4) {
            pin = System.getenv("KEYSTORE_PASSWORD").toCharArray();
            ks = KeyStore.getInstance("PKCS12");
            try (FileInputStream in = new FileInputStream(a[4])) {
                ks.load(in, pin);
            }
        } else {
            pin = System.getenv("TOKEN_USER_PIN").toCharArray();
            ks = KeyStore.getInstance("PKCS11", p);
            ks.load(null, pin);
        }
        for (String alias : Collections.list(ks.aliases())) {
            if (ks.isKeyEntry(alias)) {
                System.out.println("key: " + alias + ": " + ks.getKey(alias, pin));
            }
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("NewSunX509");
        kmf.init(ks, pin);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        String[] protocols = a[2].split(",");
        String[] suites = a[3].split(",");
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(a[1])), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(ctx) {
            @Override
            public void configure(HttpsParameters params) {
                var ssl = ctx.getDefaultSSLParameters();
                ssl.setProtocols(protocols);
                ssl.setCipherSuites(suites);
                params.setSSLParameters(ssl);
            }
        });
        server.createContext("/", exchange -> {
            byte[] body = "served\n".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        System.out.println("listening: " + a[1]);
    }
}
