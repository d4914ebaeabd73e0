#pragma once

#include <QList>
#include <QNetworkAccessManager>
#include <QNetworkReply>

namespace loopscope {

// A QNetworkReply answered in-process by DemoModel. Each response chunk (one JSON body, or one
// SSE frame each) is delivered in its own event-loop turn, so streaming code sees a real stream.
class DemoReply : public QNetworkReply {
    Q_OBJECT
public:
    DemoReply(const QNetworkRequest &request, QNetworkAccessManager::Operation op,
              const QByteArray &verb, const QByteArray &body, QObject *parent = nullptr);

    void abort() override;
    qint64 bytesAvailable() const override { return m_buffer.size() + QIODevice::bytesAvailable(); }
    bool isSequential() const override { return true; }

protected:
    qint64 readData(char *data, qint64 maxSize) override;

private:
    void deliverHead();
    void deliverNext();

    int m_status = 200;
    QByteArray m_contentType;
    QList<QByteArray> m_chunks;
    qsizetype m_next = 0;
    QByteArray m_buffer;
    bool m_aborted = false;
};

} // namespace loopscope
