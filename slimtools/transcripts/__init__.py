"""Recorded agent transcripts as histories slimtools can clear and measure, and back.

Formats (:data:`SOURCES`), recognised from each file's content or forced with ``format=``:

- the clearing core's own formats as files: OpenAI Chat (a message list, a request body or
  JSON Lines of messages), OpenAI Responses items (a list or a body with ``input``),
  Anthropic Messages (a list or a body), LangChain ``messages_to_dict`` dumps;
- recorders: Claude Code sessions (subagent transcripts too), SWE-agent ``.traj``,
  mini-swe-agent trajectories, tau-bench trajectory lists and OpenHands event streams.

Text-action recorders (SWE-agent without function calling, mini-swe-agent, older OpenHands
streams) get synthetic tool calls so that clearing can be measured on them
(:attr:`Transcript.synthetic`). Files are streamed: JSON Lines a line at a time and files of
many runs a run at a time (:func:`iter_transcripts`); :func:`stream_file` also reads a
single long run (a Claude Code session) message by message. Each message records where it came
from (:class:`Origin`), so :func:`clear_file` can write a cleared run back into the same
file format, and :func:`restore_file` can put the originals back. Claude Code sessions
also recorded what each request was billed: :func:`read_usage` (or a streamed run's
``usage``) gives it as :class:`RecordedRequest` records.
"""

from slimtools.errors import TranscriptError
from slimtools.transcripts._jsonio import TornLineWarning
from slimtools.transcripts._load import (
    OnError,
    detect_source,
    iter_file,
    iter_transcripts,
    load_file,
    load_transcripts,
)
from slimtools.transcripts._memory import (
    claude_code_messages,
    load_claude_code,
    mini_swe_agent_history,
    swe_agent_history,
    tau_bench_runs,
)
from slimtools.transcripts._model import SOURCES, Location, Origin, Source, Transcript
from slimtools.transcripts._reader import RunStream
from slimtools.transcripts._stream import read_usage, stream_file, transcript_files
from slimtools.transcripts._usage import RecordedRequest, recorded_requests
from slimtools.transcripts._writeback import FileClearing, clear_file, restore_file

__all__ = [
    "SOURCES",
    "FileClearing",
    "Location",
    "OnError",
    "Origin",
    "RecordedRequest",
    "RunStream",
    "Source",
    "TornLineWarning",
    "Transcript",
    "TranscriptError",
    "claude_code_messages",
    "clear_file",
    "detect_source",
    "iter_file",
    "iter_transcripts",
    "load_claude_code",
    "load_file",
    "load_transcripts",
    "mini_swe_agent_history",
    "read_usage",
    "recorded_requests",
    "restore_file",
    "stream_file",
    "swe_agent_history",
    "tau_bench_runs",
    "transcript_files",
]
