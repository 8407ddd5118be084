# The owner's dashboard in Yandex Monitoring: the functions' invocations,
# errors and durations, the triggers' errors and dead-letter queues, and the
# database's request units, all from metrics the platform collects by
# itself (nothing to install, nothing the code sends). What each chart
# reads, and what of it is not confirmed: docs/deploy.md, "The dashboard".
# How the jobs themselves are doing is not a metric: `transcriber status`.
#
# A query selects only by labels the metric reference documents (a test in
# terraform/tftest checks it). Message Queue and YDB document no label that
# names a queue or a database, so those charts draw one line per queue and
# per database of the folder, none summed with another.

locals {
  # The charts' series, one per function and trigger, named as in the
  # configuration.
  dashboard_functions = {
    api      = yandex_function.api.id
    telegram = yandex_function.telegram.id
    ingest   = yandex_function.ingest.id
    poll     = yandex_function.poll.id
  }
  dashboard_triggers = {
    ingest = yandex_function_trigger.ingest.id
    poll   = yandex_function_trigger.poll.id
  }
  # Named in the queues chart's title: the chart itself draws every queue
  # of the folder.
  dashboard_dlqs = {
    ingest = yandex_message_queue.ingest_dlq.name
    poll   = yandex_message_queue.poll_dlq.name
  }
  # Every query names the folder and the service: Monitoring requires both
  # (Yandex Monitoring, "Query language").
  functions_selector = "folderId=\"${var.folder_id}\", service=\"serverless-functions\""
  queues_selector    = "folderId=\"${var.folder_id}\", service=\"message-queue\""
  ydb_selector       = "folderId=\"${var.folder_id}\", service=\"ydb\""
}

resource "yandex_monitoring_dashboard" "main" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-service"
  title       = "${var.name_prefix}: functions, triggers, database"
  description = "Invocations, errors and durations of the functions; the triggers' errors and dead-letter queues; the database's request units against its throttling limit."

  widgets {
    title {
      text = "Functions"
      size = "TITLE_SIZE_M"
    }
    position {
      x = 0
      y = 0
      w = 36
      h = 2
    }
  }

  widgets {
    chart {
      chart_id       = "invocations"
      title          = "Invocations a second"
      display_legend = true
      queries {
        dynamic "target" {
          for_each = local.dashboard_functions
          content {
            query     = "alias(\"serverless.functions.started_per_second\"{${local.functions_selector}, function=\"${target.value}\"}, \"${target.key}\")"
            text_mode = true
          }
        }
      }
    }
    position {
      x = 0
      y = 2
      w = 12
      h = 8
    }
  }

  widgets {
    chart {
      chart_id       = "errors"
      title          = "Errors a second"
      display_legend = true
      queries {
        dynamic "target" {
          for_each = local.dashboard_functions
          content {
            query     = "alias(\"serverless.functions.errors_per_second\"{${local.functions_selector}, function=\"${target.value}\"}, \"${target.key}\")"
            text_mode = true
          }
        }
      }
    }
    position {
      x = 12
      y = 2
      w = 12
      h = 8
    }
  }

  widgets {
    chart {
      chart_id       = "durations"
      title          = "Duration, 95th percentile, ms"
      display_legend = true
      queries {
        dynamic "target" {
          for_each = local.dashboard_functions
          content {
            query     = "alias(histogram_percentile(95, \"bin\", \"serverless.functions.execution_time_milliseconds\"{${local.functions_selector}, function=\"${target.value}\"}), \"${target.key}\")"
            text_mode = true
          }
        }
      }
    }
    position {
      x = 24
      y = 2
      w = 12
      h = 8
    }
  }

  widgets {
    title {
      text = "Triggers"
      size = "TITLE_SIZE_M"
    }
    position {
      x = 0
      y = 10
      w = 36
      h = 2
    }
  }

  widgets {
    chart {
      chart_id       = "trigger_errors"
      title          = "Trigger errors a second: failed calls and access errors"
      display_legend = true
      queries {
        dynamic "target" {
          for_each = local.dashboard_triggers
          content {
            query     = "alias(series_sum(\"serverless.triggers.error_per_second\"{${local.functions_selector}, trigger=\"${target.value}\"}), \"${target.key}: errors\")"
            text_mode = true
          }
        }
        dynamic "target" {
          for_each = local.dashboard_triggers
          content {
            query     = "alias(series_sum(\"serverless.triggers.access_error_per_second\"{${local.functions_selector}, trigger=\"${target.value}\"}), \"${target.key}: access errors\")"
            text_mode = true
          }
        }
      }
    }
    position {
      x = 0
      y = 12
      w = 18
      h = 8
    }
  }

  widgets {
    chart {
      chart_id       = "dead_letters"
      title          = "Messages in the folder's queues; the dead-letter queues are ${join(" and ", values(local.dashboard_dlqs))}"
      display_legend = true
      queries {
        target {
          query     = "\"queue.messages.stored_count\"{${local.queues_selector}}"
          text_mode = true
        }
      }
    }
    position {
      x = 18
      y = 12
      w = 18
      h = 8
    }
  }

  widgets {
    title {
      text = "Database"
      size = "TITLE_SIZE_M"
    }
    position {
      x = 0
      y = 20
      w = 36
      h = 2
    }
  }

  widgets {
    chart {
      chart_id       = "request_units"
      title          = "Request units a second, a line per database of the folder, and this database's throttling limit"
      display_legend = true
      queries {
        target {
          query     = "\"api.units.consumed_per_second\"{${local.ydb_selector}}"
          text_mode = true
        }
        target {
          query     = "alias(constant_line(${local.ydb_ru_per_second}), \"limit\")"
          text_mode = true
        }
      }
    }
    position {
      x = 0
      y = 22
      w = 24
      h = 8
    }
  }

  widgets {
    text {
      text = "How the jobs are doing (the queue, what the oldest waits for, the day's failures, the request quota, the month's audio): `transcriber status`, or the bot's /status for TELEGRAM_OWNER_ID."
    }
    position {
      x = 24
      y = 22
      w = 12
      h = 8
    }
  }
}
