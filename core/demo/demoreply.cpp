#include "demo/demoreply.h"

#include "demo/demomodel.h"

#include <QTimer>

#include <cstring>

namespace loopscope {

DemoReply::DemoReply(const QNetworkRequest &request, QNetworkAccessManager::Operation op,
                     const QByteArray &verb, const QByteArray &body, QObject *parent)
    : QNetworkReply(parent) {
    setRequest(request);
    setUrl(request.url());
    setOperation(op);
    open(QIODevice::ReadOnly);
    QString path = request.url().path();
    if (path.startsWith(QLatin1String("/v1/")))
        path = path.mid(3);
    const DemoModel::Reply reply = DemoModel::handle(verb, path, body);
    m_status = reply.status;
    m_contentType = reply.contentType;
    m_chunks = reply.chunks;
    QTimer::singleShot(0, this, &DemoReply::deliverHead);
}

void DemoReply::deliverHead() {
    if (m_aborted)
        return;
    setAttribute(QNetworkRequest::HttpStatusCodeAttribute, m_status);
    setAttribute(QNetworkRequest::HttpReasonPhraseAttribute,
                 m_status == 200 ? QByteArrayLiteral("OK") : QByteArrayLiteral("Error"));
    setRawHeader("Content-Type", m_contentType);
    setRawHeader("x-loopscope-demo", "scripted offline model");
    emit metaDataChanged();
    deliverNext();
}

void DemoReply::deliverNext() {
    if (m_aborted)
        return;
    if (m_next < m_chunks.size()) {
        m_buffer += m_chunks.at(m_next++);
        emit readyRead();
        QTimer::singleShot(0, this, &DemoReply::deliverNext);
        return;
    }
    setFinished(true);
    emit finished();
}

void DemoReply::abort() {
    if (m_aborted || isFinished())
        return;
    m_aborted = true;
    setError(OperationCanceledError, QStringLiteral("Operation canceled"));
    emit errorOccurred(OperationCanceledError);
    setFinished(true);
    emit finished();
}

qint64 DemoReply::readData(char *data, qint64 maxSize) {
    const qint64 n = qMin<qint64>(maxSize, m_buffer.size());
    if (n <= 0)
        return isFinished() ? -1 : 0;
    std::memcpy(data, m_buffer.constData(), size_t(n));
    m_buffer.remove(0, qsizetype(n));
    return n;
}

} // namespace loopscope
