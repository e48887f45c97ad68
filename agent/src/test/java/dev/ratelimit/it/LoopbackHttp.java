package dev.ratelimit.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, from a chosen loopback source address: on Linux all of
 * 127.0.0.0/8 is loopback, so each test can be its own client address without a proxy, and can
 * send exactly the bytes it wants (repeated headers, odd paths, values other clients refuse).
 */
public final class LoopbackHttp {
    private LoopbackHttp() {
    }

    /** Sends one request from {@code source} and reads the whole response. */
    public static Response send(String source, int port, String method, String target, List<String> headers,
            String body) throws IOException {
        StringBuilder request = new StringBuilder();
        request.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        request.append("Host: 127.0.0.1:").append(port).append("\r\n");
        request.append("Connection: close\r\n");
        for (String header : headers) {
            request.append(header).append("\r\n");
        }
        byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        if (body != null) {
            request.append("Content-Type: text/plain\r\nContent-Length: ").append(payload.length).append("\r\n");
        }
        request.append("\r\n");
        try (Socket socket = new Socket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
            socket.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 5000);
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(payload);
            out.flush();
            return Response.parse(socket.getInputStream());
        }
    }

    public static Response get(String source, int port, String target, String... headers) throws IOException {
        return send(source, port, "GET", target, List.of(headers), null);
    }

    public static Response post(String source, int port, String target, String body, String... headers)
            throws IOException {
        return send(source, port, "POST", target, List.of(headers), body);
    }

    /** A parsed response. Header names are lower-cased. */
    public static final class Response {
        public final int status;
        public final Map<String, List<String>> headers;
        public final String body;

        private Response(int status, Map<String, List<String>> headers, String body) {
            this.status = status;
            this.headers = headers;
            this.body = body;
        }

        /** The first value of a header, or null. */
        public String header(String name) {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null || values.isEmpty() ? null : values.get(0);
        }

        static Response parse(InputStream in) throws IOException {
            byte[] all = in.readAllBytes();
            String text = new String(all, StandardCharsets.ISO_8859_1);
            int end = text.indexOf("\r\n\r\n");
            if (end < 0) {
                throw new IOException("incomplete response: " + text);
            }
            String[] lines = text.substring(0, end).split("\r\n");
            int status = Integer.parseInt(lines[0].split(" ")[1]);
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        k -> new ArrayList<>()).add(lines[i].substring(colon + 1).trim());
            }
            byte[] rawBody = java.util.Arrays.copyOfRange(all, end + 4, all.length);
            List<String> encoding = headers.get("transfer-encoding");
            if (encoding != null && encoding.get(0).equalsIgnoreCase("chunked")) {
                rawBody = dechunk(rawBody);
            }
            return new Response(status, headers, new String(rawBody, StandardCharsets.UTF_8));
        }

        private static byte[] dechunk(byte[] data) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int at = 0;
            while (at < data.length) {
                int lineEnd = at;
                while (lineEnd + 1 < data.length && !(data[lineEnd] == '\r' && data[lineEnd + 1] == '\n')) {
                    lineEnd++;
                }
                String sizeText = new String(data, at, lineEnd - at, StandardCharsets.ISO_8859_1).split(";")[0].trim();
                int size = sizeText.isEmpty() ? 0 : Integer.parseInt(sizeText, 16);
                if (size == 0) {
                    break;
                }
                out.write(data, lineEnd + 2, size);
                at = lineEnd + 2 + size + 2;
            }
            return out.toByteArray();
        }

        @Override
        public String toString() {
            return status + " " + headers + " " + body;
        }
    }
}
