// A small HTTPS server whose private key and certificate live in a PKCS#11 token: an honest stand-in for
// WebSphere's HTTPS transport with a hardware keystore (WebSphere itself cannot be installed in the checks).
// Run: TOKEN_USER_PIN=... java TokenHttpsServer.java CONFIG ALIAS PORT PROTOCOLS SUITES
//   CONFIG     the token configuration file (the same file IBMPKCS11Impl reads; here OpenJDK's SunPKCS11)
//   PROTOCOLS  comma-separated, e.g. TLSv1.2,TLSv1.3; SUITES comma-separated, as the wsadmin script sets them
// Prints "key: ..." (the token key object) and "listening: PORT" when ready; answers every request with one line.
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.Provider;
import java.security.Security;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

public class TokenHttpsServer {
    public static void main(String[] a) throws Exception {
        char[] pin = System.getenv("TOKEN_USER_PIN").toCharArray();
        Provider p = Security.getProvider("SunPKCS11").configure(a[0]);
        // Registered LAST: the key is a token object, so its signatures still go to the token, while ciphers and
        // HKDF stay with OpenJDK's software providers. With SunPKCS11 and openCryptoki 3.23's soft token FIRST,
        // OpenJDK 21's handshakes failed with "bad record mac" here (not investigated further).
        Security.addProvider(p);
        KeyStore ks = KeyStore.getInstance("PKCS11", p);
        ks.load(null, pin);
        System.out.println("key: " + ks.getKey(a[1], pin));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("NewSunX509");
        kmf.init(ks, pin);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        String[] protocols = a[3].split(",");
        String[] suites = a[4].split(",");
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(a[2])), 0);
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
            byte[] body = "served with the key in the token\n".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        System.out.println("listening: " + a[2]);
    }
}
