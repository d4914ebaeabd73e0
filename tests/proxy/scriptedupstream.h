#pragma once

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPair>
#include <QQueue>

#include <functional>

class QTcpServer;
class QTcpSocket;

namespace loopscope::test {

// A fake OpenAI-compatible upstream on a real loopback socket, speaking the real wire protocol
// (HTTP/1.1 keep-alive, JSON bodies, SSE over chunked encoding) with scripted answers and
// controllable timing. Lives in the thread that creates it. Reusable by other suites (issue 5).
class ScriptedUpstream : public QObject {
    Q_OBJECT
public:
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    struct Request {
        QByteArray method;
        QByteArray target; // e.g. "/v1/responses"
        Headers headers;   // names lower-case
        QByteArray body;
        QByteArray header(const QByteArray &lowerName) const;
        QJsonObject json() const;
    };

    struct Response {
        int status = 200;
        QByteArray contentType = "application/json";
        Headers headers;
        QByteArray body;             // sent with Content-Length when `sse` is false
        bool sse = false;            // chunked text/event-stream made of `chunks`
        QList<QByteArray> chunks;    // each written as one HTTP chunk
        int headerDelayMs = 0;       // wait before the status line (slow upstream)
        int chunkDelayMs = 0;        // wait between chunks
        bool hold = false;           // after the chunks keep the stream open until releaseHeld()
        bool dropConnection = false; // close the socket instead of answering

        static Response json(int status, const QByteArray &body);
        static Response json(const QJsonObject &object, int status = 200);
        static Response events(const QList<QByteArray> &chunks, int chunkDelayMs = 0);
    };
    using Responder = std::function<Response(const Request &)>;

    explicit ScriptedUpstream(QObject *parent = nullptr);
    ~ScriptedUpstream() override;

    bool listen();
    quint16 port() const;
    // "http://127.0.0.1:PORT/v1": what --upstream / api_base take.
    QString baseUrl() const;

    // Answers come from the queue first, then from the responder, else 200 {}.
    void enqueue(const Response &response) { m_queue.enqueue(response); }
    void setResponder(Responder responder) { m_responder = std::move(responder); }

    // Off for load tests: requests are then only counted.
    void setRecordRequests(bool record) { m_record = record; }
    QList<Request> requests() const { return m_requests; }
    int requestCount() const { return m_count; }
    // Streams whose client closed the connection before the stream was finished.
    int abortedStreams() const { return m_abortedStreams; }
    int heldStreams() const { return int(m_held.size()); }
    // Writes extra chunks to, then finishes, every held stream.
    void writeToHeld(const QByteArray &chunk);
    void releaseHeld();

signals:
    void requestReceived();
    void streamAborted();

private:
    struct Connection {
        QByteArray buffer;
        bool streaming = false;
    };
    void onNewConnection();
    void onReadyRead(QTcpSocket *socket);
    void respond(QTcpSocket *socket, const Request &request);
    void writeChunks(QTcpSocket *socket, Response response, qsizetype index);

    QTcpServer *m_server;
    QHash<QTcpSocket *, Connection> m_connections;
    QQueue<Response> m_queue;
    Responder m_responder;
    QList<Request> m_requests;
    QList<QTcpSocket *> m_held;
    int m_abortedStreams = 0;
    int m_count = 0;
    bool m_record = true;
};

} // namespace loopscope::test
