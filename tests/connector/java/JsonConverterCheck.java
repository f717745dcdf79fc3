// Reads every record of the given topics from the beginning to their current end with Kafka's own
// consumer (isolation.level=read_committed) and decodes each key and value with Kafka Connect's
// JsonConverter (schemas.enable=true), as a Kafka Connect sink connector would. Each decoded
// value is encoded again with the same converter and must give the same JSON as the record.
// Prints one JSON line per record and exits 1 at the first record the converter cannot take.
//
// Usage: java -cp <kafka jars>:<dir> JsonConverterCheck <bootstrap> <topic>...

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;

public class JsonConverterCheck {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("isolation.level", "read_committed");
        props.put("enable.auto.commit", "false");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        JsonConverter keys = new JsonConverter();
        keys.configure(Map.of("schemas.enable", "true"), true);
        JsonConverter values = new JsonConverter();
        values.configure(Map.of("schemas.enable", "true"), false);
        ObjectMapper json = new ObjectMapper();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int i = 1; i < args.length; i++) {
                for (PartitionInfo p : consumer.partitionsFor(args[i], Duration.ofSeconds(30))) {
                    partitions.add(new TopicPartition(p.topic(), p.partition()));
                }
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.currentTimeMillis() + 60_000;
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("could not read the topics to their end in 60 s");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) {
                        continue;
                    }
                    ObjectNode line = json.createObjectNode();
                    line.put("topic", r.topic()).put("partition", r.partition()).put("offset", r.offset());
                    line.set("key", decode(keys, json, r.topic(), r.key(), "key", r));
                    line.set("value", decode(values, json, r.topic(), r.value(), "value", r));
                    System.out.println(json.writeValueAsString(line));
                }
            }
        }
    }

    /** The Connect schema name and whether the round trip gave the same JSON. */
    static JsonNode decode(
            JsonConverter converter, ObjectMapper json, String topic, byte[] bytes, String what,
            ConsumerRecord<byte[], byte[]> r) throws Exception {
        ObjectNode out = json.createObjectNode();
        SchemaAndValue data;
        try {
            data = converter.toConnectData(topic, bytes);
        } catch (RuntimeException e) {
            System.err.printf("JsonConverter cannot decode the %s of %s-%d@%d: %s%n",
                    what, r.topic(), r.partition(), r.offset(), e);
            System.exit(1);
            return null;
        }
        if (bytes == null) {
            return out.putNull("schema");
        }
        out.put("schema", data.schema() == null ? null : data.schema().name());
        out.put("type", data.schema() == null ? null : data.schema().type().toString());
        byte[] again = converter.fromConnectData(topic, data.schema(), data.value());
        out.put("same", json.readTree(bytes).equals(json.readTree(again)));
        if (!json.readTree(bytes).equals(json.readTree(again))) {
            out.put("original", new String(bytes, "UTF-8"));
            out.put("reencoded", new String(again, "UTF-8"));
        }
        return out;
    }
}
