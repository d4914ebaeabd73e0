#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpServer>

#include <functional>

class QTcpSocket;

namespace loopscope::test {

// A loopback stand-in for e2b's cloud: the sandbox API (POST/GET/DELETE /sandboxes,
// POST /sandboxes/<id>/timeout) and the sandbox's /execute NDJSON stream, served over real
// HTTP/1.1 from a QTcpServer. /execute lives at /sandbox/<id>/<domain>/execute so the backend's
// executeUrlTemplate can point here; its body is sent chunked, in fragments that split lines
// and UTF-8 sequences, with a pause between fragments so they reach the client as separate reads.
class E2bStandIn : public QObject {
    Q_OBJECT
public:
    struct Request {
        QByteArray method;
        QByteArray path;
        QHash<QByteArray, QByteArray> headers; // names lower-cased
        QByteArray body;
    };
    struct Sandbox {
        QString envdToken;
        QString trafficToken;
        int executions = 0;
    };
    // What /execute answers with.
    struct ExecuteReply {
        int status = 200;
        QByteArray body;       // NDJSON (or an error body for status != 200)
        int fragmentBytes = 0; // 0 = the whole body in one chunk
        int pauseMs = 2;       // between fragments
        int holdAfter = -1;    // stop after this many fragments until release()
    };
    using ExecuteHandler =
        std::function<ExecuteReply(const Request &, const QString &sandboxId, Sandbox &sandbox)>;

    static constexpr auto kApiKey = "e2b_standin_key_5678";
    static constexpr auto kDomain = "standin.test";

    explicit E2bStandIn(QObject *parent = nullptr);
    bool listen();
    quint16 port() const { return m_server.serverPort(); }
    QString baseUrl() const;
    QString executeUrlTemplate() const; // for E2bBackend::Options

    // Default handler: prints "ran: <code>" and counts executions per sandbox.
    void setExecuteHandler(ExecuteHandler handler) { m_handler = std::move(handler); }
    void expire(const QString &sandboxId) { m_sandboxes.remove(sandboxId); }
    bool isAlive(const QString &sandboxId) const { return m_sandboxes.contains(sandboxId); }
    // Answer /execute with 502 while GET /sandboxes/<id> still says 200 (a transient error).
    void setExecuteBadGateway(bool on) { m_badGateway = on; }
    void release(); // resume a held /execute stream

    const QList<Request> &requests() const { return m_requests; }
    QList<Request> requestsTo(const QByteArray &method, const QByteArray &pathPrefix) const;
    int fragmentsWritten() const { return m_fragmentsWritten; }
    bool clientAbortedStream() const { return m_clientAborted; }
    bool streamFinished() const { return m_streamFinished; }

    static QList<QByteArray> split(const QByteArray &bytes, int every);

private:
    void onReadyRead(QTcpSocket *socket);
    void handle(QTcpSocket *socket, const Request &request);
    void respond(QTcpSocket *socket, int status, const QByteArray &body,
                 const QByteArray &contentType = "application/json");
    void streamNext(QPointer<QTcpSocket> socket);

    QTcpServer m_server;
    QHash<QTcpSocket *, QByteArray> m_buffers;
    QHash<QString, Sandbox> m_sandboxes;
    QList<Request> m_requests;
    ExecuteHandler m_handler;
    int m_nextId = 1;
    bool m_badGateway = false;
    // The one stream in flight (tests run one at a time).
    QList<QByteArray> m_pending;
    int m_pauseMs = 0;
    int m_holdAfter = -1;
    int m_sent = 0;
    bool m_held = false;
    QPointer<QTcpSocket> m_streamSocket;
    int m_fragmentsWritten = 0;
    bool m_clientAborted = false;
    bool m_streamFinished = false;
};

} // namespace loopscope::test
