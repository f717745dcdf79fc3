// Renders MySQL binary JSON values the way Debezium streams them: mysql-binlog-connector-java's
// JsonBinary.parseAsString (its JsonStringFormatter). Reads one hex-encoded value per stdin line and
// prints, per line, "ok <base64 of the UTF-8 text>" or "error <exception>" (the text may hold
// newlines and any character, hence the base64).
//
// Usage: java -cp <binlog client jars>:<dir> JsonBinaryRender < values.hex

import com.github.shyiko.mysql.binlog.event.deserialization.json.JsonBinary;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;

public class JsonBinaryRender {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        String line;
        while ((line = in.readLine()) != null) {
            byte[] value = HexFormat.of().parseHex(line.trim());
            try {
                String text = JsonBinary.parseAsString(value);
                out.println("ok " + Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8)));
            } catch (Exception e) {
                out.println("error " + e.toString().replace('\n', ' '));
            }
        }
        out.flush();
    }
}
