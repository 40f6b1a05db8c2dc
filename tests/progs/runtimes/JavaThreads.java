// Java runtime (HotSpot: JIT, GC, its own threads): strings, collections
// and 4 worker threads, with a deterministic output; exit status 6.
// Thread k builds 20000 * (k + 1) strings into a HashMap and a sorted list
// and reports their count and a checksum of their lengths.
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class JavaThreads {
    static String work(int k) {
        int n = 20000 * (k + 1);
        Map<String, Integer> byName = new HashMap<>();
        List<String> names = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < n; i++) {
            String name = "item-" + k + "-" + Integer.toHexString(i * 7919);
            byName.put(name, i);
            names.add(name);
            if (i % 1000 == 0) text.append(name.charAt(name.length() - 1));
        }
        Collections.sort(names);
        long lengths = 0;
        for (String name : names) lengths += name.length() * (long) byName.get(name);
        return "worker " + k + ": " + byName.size() + " strings, " + lengths + ", first " + names.get(0) + ", " + text;
    }

    public static void main(String[] args) throws InterruptedException {
        String[] results = new String[4];
        Thread[] threads = new Thread[4];
        for (int k = 0; k < 4; k++) {
            final int t = k;
            threads[k] = new Thread(() -> results[t] = work(t), "worker" + k);
            threads[k].start();
        }
        for (Thread t : threads) t.join();
        for (String r : results) System.out.println(r);
        System.exit(6);
    }
}
