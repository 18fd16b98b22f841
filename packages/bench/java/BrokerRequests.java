import com.sun.tools.attach.VirtualMachine;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The broker's own request counts, for the throughput bench (packages/bench/src/throughput/broker-requests.ts).
 * Attaches to the broker's JVM by pid (the JDK's attach API starts its local JMX agent: no port, no restart),
 * then answers each line on stdin with one JSON line: the cumulative count of requests the broker has served,
 * by API (kafka.network:type=RequestMetrics,name=RequestsPerSec,request=*, every version summed).
 * Run as a source file: java BrokerRequests.java <pid>
 */
public class BrokerRequests {
  public static void main(String[] args) throws Exception {
    VirtualMachine vm = VirtualMachine.attach(args[0]);
    String address = vm.startLocalManagementAgent();
    vm.detach();
    MBeanServerConnection broker = JMXConnectorFactory.connect(new JMXServiceURL(address)).getMBeanServerConnection();
    ObjectName requests = new ObjectName("kafka.network:type=RequestMetrics,name=RequestsPerSec,*");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    System.out.println("ready");
    System.out.flush();
    while (in.readLine() != null) {
      Map<String, Long> counts = new TreeMap<>();
      for (ObjectName name : broker.queryNames(requests, null)) {
        counts.merge(name.getKeyProperty("request"), ((Number) broker.getAttribute(name, "Count")).longValue(), Long::sum);
      }
      StringBuilder json = new StringBuilder("{");
      for (Map.Entry<String, Long> entry : counts.entrySet()) {
        if (json.length() > 1) json.append(',');
        json.append('"').append(entry.getKey()).append("\":").append(entry.getValue());
      }
      System.out.println(json.append('}'));
      System.out.flush();
    }
  }
}
