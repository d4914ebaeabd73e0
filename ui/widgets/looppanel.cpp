#include "widgets/looppanel.h"

#include "models/looptimelinemodel.h"
#include "models/rawsections.h"
#include "models/requestsmodel.h"
#include "widgets/timelinebardelegate.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace loopscope {

LoopPanel::LoopPanel(RequestsModel *requests, QWidget *parent)
    : QWidget(parent)
    , m_model(new LoopTimelineModel(this))
    , m_view(new QTableView(this))
    , m_summary(new QLabel(this))
    , m_details(new QPlainTextEdit(this)) {
    m_model->setRequestsModel(requests);
    m_view->setModel(m_model);
    m_view->setItemDelegateForColumn(LoopTimelineModel::TimelineColumn,
                                     new TimelineBarDelegate(m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(LoopTimelineModel::StepColumn, 110);
    m_view->setColumnWidth(LoopTimelineModel::StartColumn, 80);
    m_view->setColumnWidth(LoopTimelineModel::DurationColumn, 80);
    m_details->setReadOnly(true);
    m_details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_details->setPlaceholderText(tr("Select a step to see its details."));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showDetails(current.row()); });
    // While the request runs, new steps arrive: keep the newest code run in the Code panel
    // unless the user picked a step.
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_view->selectionModel()->hasSelection()) {
            if (const CodeRunRecord *run = m_model->codeRunAt(m_model->lastCodeRunRow()))
                emit codeRunSelected(*run);
        }
        m_summary->setText(tr("%n step(s)", nullptr, m_model->rowCount()));
    });

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_view);
    splitter->addWidget(m_details);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(splitter, 1);
}

void LoopPanel::setRequestId(const QString &requestId) {
    m_model->setRequestId(requestId);
    m_details->clear();
    m_summary->setText(requestId.isEmpty() ? tr("No request selected")
                                           : tr("%n step(s)", nullptr, m_model->rowCount()));
    if (const CodeRunRecord *run = m_model->codeRunAt(m_model->lastCodeRunRow()))
        emit codeRunSelected(*run);
}

void LoopPanel::selectStep(int row) {
    const QModelIndex index = m_model->index(row, 0);
    if (index.isValid())
        m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                             QItemSelectionModel::Rows);
}

void LoopPanel::showDetails(int row) {
    if (const UpstreamCallRecord *call = m_model->upstreamCallAt(row)) {
        QString text = tr("Model call (iteration %1): HTTP %2 in %3 ms\n")
                           .arg(call->iteration + 1)
                           .arg(call->status)
                           .arg(call->latencyMs);
        text += tr("Tokens: %1 in, %2 out, %3 total\n")
                    .arg(call->usage.input)
                    .arg(call->usage.output)
                    .arg(call->usage.total);
        if (!call->error.isEmpty())
            text += tr("Error: %1\n").arg(call->error);
        text +=
            u'\n' + QString::fromUtf8(QJsonDocument(RawSections::mask(call->response).toObject())
                                          .toJson(QJsonDocument::Indented));
        m_details->setPlainText(text);
        return;
    }
    if (const CodeRunRecord *run = m_model->codeRunAt(row)) {
        QString text = tr("Code run (iteration %1) in %2 on %3: %4 ms\n")
                           .arg(run->iteration + 1)
                           .arg(run->callId, run->containerId)
                           .arg(run->durationMs, 0, 'f', 1);
        if (run->hasError())
            text += tr("Error: %1: %2\n").arg(run->errorName, run->errorValue);
        text += tr("Fed back to the model:\n") + run->output;
        m_details->setPlainText(text);
        emit codeRunSelected(*run);
        return;
    }
    m_details->clear();
}

} // namespace loopscope
