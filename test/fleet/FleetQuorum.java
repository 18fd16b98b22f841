// Prints the active KRaft controller as one JSON line: {"controller":2}. Used by test/fleet/kafka-quorum.mjs.
import java.util.Properties;
import org.apache.kafka.clients.admin.*;

public class FleetQuorum {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
    try (Admin admin = Admin.create(props)) {
      System.out.println("{\"controller\":" + admin.describeMetadataQuorum().quorumInfo().get().leaderId() + "}");
    }
  }
}
