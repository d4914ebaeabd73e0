#pragma once

#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;
class QTableView;
class QTimer;

namespace loopscope {

class SandboxCommands;
class SandboxesModel;

// Every live sandbox, with Delete (confirmed) and Delete all. Deleting goes through
// SandboxCommands to the registry; rows leave when the registry reports the removal.
class SandboxesPanel : public QWidget {
    Q_OBJECT
public:
    // Asked before deleting; returns whether to go ahead. The default shows a message box.
    using Confirm = std::function<bool(const QString &question)>;

    SandboxesPanel(SandboxesModel *model, SandboxCommands *commands, QWidget *parent = nullptr);

    QTableView *view() const { return m_view; }
    QPushButton *deleteButton() const { return m_delete; }
    QPushButton *deleteAllButton() const { return m_deleteAll; }
    void setConfirmation(Confirm confirm) { m_confirm = std::move(confirm); }
    QString selectedContainerId() const;
    // The width at which Container, Session, Expires in, Runs and State show without horizontal
    // scrolling (the panel's minimum; the rest of the columns follow, hideable from the
    // header's context menu).
    int essentialWidth() const;

public slots:
    // Return whether a deletion was sent.
    bool deleteSelected();
    bool deleteAll();

private:
    void updateButtons();
    void setUpColumns();
    void showHeaderMenu(const QPoint &pos);

    SandboxesModel *m_model;
    SandboxCommands *m_commands;
    QTableView *m_view;
    QPushButton *m_delete;
    QPushButton *m_deleteAll;
    QLabel *m_note;
    QTimer *m_tick;
    Confirm m_confirm;
};

} // namespace loopscope
