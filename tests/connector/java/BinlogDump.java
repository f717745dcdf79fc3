import com.github.shyiko.mysql.binlog.BinaryLogFileReader;
import com.github.shyiko.mysql.binlog.event.DeleteRowsEventData;
import com.github.shyiko.mysql.binlog.event.Event;
import com.github.shyiko.mysql.binlog.event.EventHeaderV4;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventMetadata;
import com.github.shyiko.mysql.binlog.event.TransactionPayloadEventData;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.json.JsonBinary;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Serializable;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes binlog files with mysql-binlog-connector-java (Debezium's binlog client) and prints what it
 * decoded, one JSON object per line, for tests/connector/binlog/test_mysql8_binlogs_java.py to compare with our
 * own decoding of the same files.
 *
 * <p>Lines are either {@code {"kind":"table_map",...}} (a TABLE_MAP: column types, metadata and the
 * optional metadata the file holds) or {@code {"kind":"image",...}} (one row image: insert,
 * update-before, update-after or delete). Events inside a TRANSACTION_PAYLOAD are printed with the
 * payload event's position in {@code pos} and their place inside it in {@code inner}.
 *
 * <p>The deserializer runs with compatibility modes whose values need no time zone or charset guesswork:
 * dates and times as microseconds since the epoch (UTC), CHAR/VARCHAR/BINARY as raw bytes. Values are
 * printed with a type tag and losslessly: integers as the client returns them (signed), FLOAT and DOUBLE
 * as their IEEE bits, DECIMAL as plain text, BIT as the set bit indices, bytes as hex, and JSON columns
 * (type 245) additionally as the client's own text form ({@code JsonBinary.parseAsString}), which is what Debezium
 * emits for JSON columns.
 *
 * <p>Usage: {@code java BinlogDump FILE...}; exits non-zero (with the file and the error on stderr) when
 * the client cannot read a file, so a file it fails on is never silently compared as empty.
 */
public final class BinlogDump {

    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private static final int JSON_TYPE = 245;

    /** The TABLE_MAP last seen per table id, so JSON columns are known when a rows event comes. */
    private static final Map<Long, TableMapEventData> TABLES = new HashMap<>();

    private BinlogDump() {
    }

    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (String path : args) {
            EventDeserializer deserializer = new EventDeserializer();
            deserializer.setCompatibilityMode(
                    EventDeserializer.CompatibilityMode.DATE_AND_TIME_AS_LONG_MICRO,
                    EventDeserializer.CompatibilityMode.INVALID_DATE_AND_TIME_AS_NEGATIVE_ONE,
                    EventDeserializer.CompatibilityMode.CHAR_AND_BINARY_AS_BYTE_ARRAY);
            long events = 0;
            try (BinaryLogFileReader reader = new BinaryLogFileReader(new File(path), deserializer)) {
                for (Event event = reader.readEvent(); event != null; event = reader.readEvent()) {
                    events++;
                    EventHeaderV4 header = event.getHeader();
                    if (event.getData() instanceof TransactionPayloadEventData) {
                        List<Event> inner = ((TransactionPayloadEventData) event.getData()).getUncompressedEvents();
                        for (int i = 0; i < inner.size(); i++) {
                            print(out, path, header, i, inner.get(i));
                        }
                    } else {
                        print(out, path, header, -1, event);
                    }
                }
            } catch (IOException | RuntimeException e) {
                out.flush();
                System.err.println("BinlogDump: " + path + ": after " + events + " events: " + e);
                System.exit(2);
            }
        }
        out.flush();
    }

    private static void print(PrintStream out, String file, EventHeaderV4 outer, int inner, Event event) {
        EventHeaderV4 header = event.getHeader();
        StringBuilder common = new StringBuilder();
        common.append("\"file\":").append(quote(file))
                .append(",\"event\":").append(quote(header.getEventType().name()))
                .append(",\"pos\":").append(outer.getPosition())
                .append(",\"next_pos\":").append(outer.getNextPosition())
                .append(",\"inner\":").append(inner);
        Object data = event.getData();
        if (data instanceof TableMapEventData) {
            TABLES.put(((TableMapEventData) data).getTableId(), (TableMapEventData) data);
            out.println("{\"kind\":\"table_map\"," + common + "," + tableMap((TableMapEventData) data) + "}");
        } else if (data instanceof WriteRowsEventData) {
            WriteRowsEventData rows = (WriteRowsEventData) data;
            List<Serializable[]> images = rows.getRows();
            for (int r = 0; r < images.size(); r++) {
                out.println(image(common, rows.getTableId(), "insert", r, rows.getIncludedColumns(), images.get(r)));
            }
        } else if (data instanceof UpdateRowsEventData) {
            UpdateRowsEventData rows = (UpdateRowsEventData) data;
            List<Map.Entry<Serializable[], Serializable[]>> images = rows.getRows();
            for (int r = 0; r < images.size(); r++) {
                out.println(image(common, rows.getTableId(), "update-before", r,
                        rows.getIncludedColumnsBeforeUpdate(), images.get(r).getKey()));
                out.println(image(common, rows.getTableId(), "update-after", r,
                        rows.getIncludedColumns(), images.get(r).getValue()));
            }
        } else if (data instanceof DeleteRowsEventData) {
            DeleteRowsEventData rows = (DeleteRowsEventData) data;
            List<Serializable[]> images = rows.getRows();
            for (int r = 0; r < images.size(); r++) {
                out.println(image(common, rows.getTableId(), "delete", r, rows.getIncludedColumns(), images.get(r)));
            }
        } else if (isRowsEventType(header.getEventType().name())) {
            // A rows event the client has no deserializer for (PARTIAL_UPDATE_ROWS_EVENT): say so, so the
            // comparison can tell "no images" from "images the client could not decode".
            out.println("{\"kind\":\"undecoded_rows\"," + common + "}");
        }
    }

    private static boolean isRowsEventType(String name) {
        return name.contains("ROWS") && !name.equals("ROWS_QUERY");
    }

    private static String tableMap(TableMapEventData map) {
        StringBuilder sb = new StringBuilder();
        sb.append("\"table_id\":").append(map.getTableId())
                .append(",\"db\":").append(quote(map.getDatabase()))
                .append(",\"table\":").append(quote(map.getTable()))
                .append(",\"types\":[");
        byte[] types = map.getColumnTypes();
        for (int i = 0; i < types.length; i++) {
            sb.append(i == 0 ? "" : ",").append(types[i] & 0xFF);
        }
        sb.append("],\"meta\":[");
        int[] meta = map.getColumnMetadata();
        for (int i = 0; i < meta.length; i++) {
            sb.append(i == 0 ? "" : ",").append(meta[i]);
        }
        sb.append("]");
        TableMapEventMetadata optional = map.getEventMetadata();
        if (optional != null) {
            sb.append(",\"names\":").append(strings(optional.getColumnNames()));
            BitSet unsigned = optional.getSignedness();
            sb.append(",\"unsigned\":").append(unsigned == null
                    ? "null" : unsigned.stream().boxed().toList().toString().replace(" ", ""));
            sb.append(",\"enum_values\":").append(stringArrays(optional.getEnumStrValues()));
            sb.append(",\"set_values\":").append(stringArrays(optional.getSetStrValues()));
            sb.append(",\"column_charsets\":").append(optional.getColumnCharsets() == null
                    ? "null" : optional.getColumnCharsets().toString().replace(" ", ""));
            TableMapEventMetadata.DefaultCharset charset = optional.getDefaultCharset();
            if (charset != null) {
                sb.append(",\"default_charset\":").append(charset.getDefaultCharsetCollation())
                        .append(",\"charset_exceptions\":{");
                boolean first = true;
                Map<Integer, Integer> exceptions = charset.getCharsetCollations();
                for (Map.Entry<Integer, Integer> e : exceptions == null ? Map.<Integer, Integer>of().entrySet()
                        : exceptions.entrySet()) {
                    sb.append(first ? "" : ",").append(quote(String.valueOf(e.getKey()))).append(":").append(e.getValue());
                    first = false;
                }
                sb.append("}");
            }
        }
        return sb.toString();
    }

    private static String image(StringBuilder common, long tableId, String kind, int row, BitSet included,
                                Serializable[] values) {
        StringBuilder sb = new StringBuilder("{\"kind\":\"image\",").append(common)
                .append(",\"table_id\":").append(tableId)
                .append(",\"image\":").append(quote(kind))
                .append(",\"row\":").append(row)
                .append(",\"columns\":[");
        boolean first = true;
        for (int i = included.nextSetBit(0); i >= 0; i = included.nextSetBit(i + 1)) {
            sb.append(first ? "" : ",").append(i);
            first = false;
        }
        sb.append("],\"values\":[");
        TableMapEventData map = TABLES.get(tableId);
        for (int i = 0, column = included.nextSetBit(0); i < values.length; i++, column = included.nextSetBit(column + 1)) {
            boolean json = map != null && (map.getColumnTypes()[column] & 0xFF) == JSON_TYPE;
            sb.append(i == 0 ? "" : ",").append(value(values[i], json));
        }
        return sb.append("]}").toString();
    }

    /** One value with its type tag; lossless, so the Python side does every conversion itself. */
    private static String value(Serializable v, boolean jsonColumn) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Integer || v instanceof Long) {
            return "{\"int\":" + quote(v.toString()) + "}";
        }
        if (v instanceof Float) {
            return "{\"float32\":" + Float.floatToRawIntBits((Float) v) + "}";
        }
        if (v instanceof Double) {
            return "{\"float64\":" + quote(Long.toString(Double.doubleToRawLongBits((Double) v))) + "}";
        }
        if (v instanceof BigDecimal) {
            return "{\"decimal\":" + quote(((BigDecimal) v).toPlainString()) + "}";
        }
        if (v instanceof BitSet) {
            return "{\"bits\":" + ((BitSet) v).stream().boxed().toList().toString().replace(" ", "") + "}";
        }
        if (v instanceof byte[]) {
            byte[] bytes = (byte[]) v;
            if (!jsonColumn) {
                return "{\"bytes\":" + quote(hex(bytes)) + "}";
            }
            String json;
            try {
                json = quote(JsonBinary.parseAsString(bytes));
            } catch (IOException | RuntimeException e) {
                // Printed, not thrown: the comparison reports the value the client could not read.
                json = quote("BinlogDump: JsonBinary failed: " + e);
            }
            return "{\"bytes\":" + quote(hex(bytes)) + ",\"json\":" + json + "}";
        }
        return "{\"other\":" + quote(v.getClass().getName() + ":" + v) + "}";
    }

    private static String strings(List<String> list) {
        if (list == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < list.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(quote(list.get(i)));
        }
        return sb.append("]").toString();
    }

    private static String stringArrays(List<String[]> list) {
        if (list == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < list.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(strings(List.of(list.get(i))));
        }
        return sb.append("]").toString();
    }

    private static String hex(byte[] bytes) {
        char[] chars = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            chars[2 * i] = HEX[(bytes[i] >> 4) & 0xF];
            chars[2 * i + 1] = HEX[bytes[i] & 0xF];
        }
        return new String(chars);
    }

    private static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
