--[[
  record_pdf: keeps a variant of the searchable PDF built for a terminal job
  (or why it could not be built), for as long as the job's result.  Written
  only while the job exists and is still the very ending the build read: a
  parent redriven meanwhile (running again, or ended again with other pages)
  keeps nothing of the build, and the next request asks for a new one.  The
  mark of the build asked for goes, its work done.  The job's other variants
  are left as they are.

  Keys:
    job            the job's hash
    pdf            its searchable PDFs: a hash of two fields per variant
                   (jobs.keys.pdf_fields)
    asked          the mark of this variant's build asked for (pdf_asked)

  Args:
    finished_at    the job's finished_at when the build read it
    pdf_field      the variant's field for the document
    failure_field  the variant's field for why it could not be built
    pdf            the PDF ('' when the build failed)
    error          why the build failed ('' when it did not)

  Reply:
    {OK}                    kept
    {NO_JOB}                the job is gone (expired): nothing written
    {WRONG_STATUS, status}  not terminal, or ended again since: nothing written
]]
-- @include common

local f = redis.call('HMGET', K.job, F.status, F.finished_at)
if not f[1] then return reply{code = REPLY.NO_JOB} end
if not TERMINAL[f[1]] or f[2] ~= A.finished_at then return reply{code = REPLY.WRONG_STATUS, status = f[1]} end
redis.call('HDEL', K.pdf, A.pdf_field, A.failure_field)
if A.error ~= '' then
  redis.call('HSET', K.pdf, A.failure_field, A.error)
else
  redis.call('HSET', K.pdf, A.pdf_field, A.pdf)
end
redis.call('DEL', K.asked)
return reply{code = REPLY.OK}
